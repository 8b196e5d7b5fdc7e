module pulumi-lvm.test/pause

go 1.22
