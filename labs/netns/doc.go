// Package netns is the netns lab backend: it brings a lab of network
// namespaces to life and takes it down. It builds the lab's network from
// its topology (package network), keeps its objects in the lab store
// (internal/labstore), starts one embedded proxy per node and one backend
// server per pod (labs/agents/process), and applies ordinary Kubernetes
// manifests to it (package workload).
//
// Every step that fails leaves nothing half-built: Create deletes what it
// made, and Delete is idempotent and works from the kernel's view (the
// namespaces with the lab's prefix), so it also cleans a lab whose CLI or
// processes were killed.
//
// Every command that changes a lab (Create, Apply, DeletePods,
// RestartProxies, Delete) holds the lab's lock from its first check to its
// last change and records its intent in the lab's journal before it
// touches the kernel (txn.go); the next command settles what a killed one
// left, and an interrupted context (Ctrl-C) rolls the change back until
// its objects are stored, and stands after.
package netns
