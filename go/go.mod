module github.com/wukongim/wkcore/go

go 1.22
