nuesm-sl 1
vls 3
maxlid 12
dest 1-3 1
dest 8-10 2
dest 12 1
end
