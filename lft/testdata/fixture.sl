nuesm-sl 1
vls 3
maxlid 12
dest 1-3 1
dest 8-10 2
dest 12 1
bysrc
src 0x0002c90000000002 8-9 0
src 0x0002c90000000002 10 1
pair 10 12 2
end
