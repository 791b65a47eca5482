//go:build tools

// Package tools pins upstream's sample API server (the Aggregator conformance test's
// extension server), built by scripts/peers.sh sample-apiserver.
package tools

import _ "k8s.io/sample-apiserver"
