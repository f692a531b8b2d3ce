// Package clusters is this folder's files built into the svclab binary:
// the lab files (*.yaml), the kind cluster configs (kind/), the example
// workloads (workloads/) and the workshop's lessons (lessons/), so that a
// binary copied anywhere has them (tools/builtin finds them by name and
// puts them on disk for the commands that want paths).
//
// It is data only: it imports nothing of svclab (labs/imports_test.go).
package clusters

import (
	"embed"
	"io/fs"
)

//go:embed *.md *.yaml kind lessons workloads
var files embed.FS

// FS holds the folder's files at their paths relative to it:
// "single-node.yaml", "kind/flannel-vxlan.yaml", "workloads/nginx.yaml",
// "lessons/seed-001-ladder/lesson.yaml".
var FS fs.FS = files
