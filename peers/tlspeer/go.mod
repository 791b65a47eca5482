module kubelet-ts.local/peers/tlspeer

go 1.24.0
