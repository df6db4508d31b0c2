module github.com/nuesm/nuesm

go 1.26
