//go:build tools

// Package tools pins the external provisioner, built by scripts/peers.sh csi-provisioner.
package tools

import _ "github.com/kubernetes-csi/external-provisioner/v5/cmd/csi-provisioner"
