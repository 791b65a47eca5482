module kubelet-ts.local/peers/metricsserver

go 1.24.4

require sigs.k8s.io/metrics-server v0.8.0 // indirect
