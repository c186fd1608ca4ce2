module rpcd.test/gofixture

go 1.19
