// Package crdgen only anchors the API packages controller-gen reads in this module's graph.
package crdgen

import (
	_ "github.com/fluxcd/helm-controller/api/v2"
)
