// Package kubeprint prints API objects as kubectl does: tables with the
// API server's columns (ported from k8s.io/kubernetes
// pkg/printers/internalversion, on v1 types, with the time passed in),
// laid out by k8s.io/cli-runtime's table printer; -o json and -o yaml of
// the object (or of a v1 List of them) as kubectl's unstructured printing
// shows it (keys sorted); -o name; and `kubectl describe` of Services
// and Pods (ported from k8s.io/kubectl pkg/describe). It is pure: no
// lab, no clock, no kernel.
package kubeprint
