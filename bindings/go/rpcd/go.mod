module rpcd.local/rpcd

go 1.19
