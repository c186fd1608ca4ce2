module rpcd.local/gobinding

go 1.19

require rpcd.local/rpcd v0.0.0

replace rpcd.local/rpcd => ../../../bindings/go/rpcd
