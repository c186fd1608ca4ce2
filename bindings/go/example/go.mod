module rpcd.local/example

go 1.19

require rpcd.local/rpcd v0.0.0

replace rpcd.local/rpcd => ../rpcd
