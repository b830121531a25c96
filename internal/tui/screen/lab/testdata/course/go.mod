module example.com/fixturecourse

go 1.26
