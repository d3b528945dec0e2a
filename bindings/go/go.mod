module libperps/bindings/go

go 1.19
