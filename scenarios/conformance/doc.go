// Package conformance is the scenarios that run unchanged on every
// backend: svclab's netns labs (`go test ./scenarios/conformance`, part of
// `make test`) and any Kubernetes cluster (bin/svclab-conformance.test,
// built from ./e2e: `svclab conformance --kubeconfig FILE` runs it, and
// `make e2e-kind` runs it on kind clusters made for the run through
// e2e-framework). The specs see only a kit.Target; the runner passes
// Register the Options that make it (and the image), before RunSpecs.
//
// The scenarios: a two-pod 50/50 split and a three-pod ladder (traffic
// from a pod and from outside the pod network, counted with /hostname;
// rules, counters and conntrack checked on the node), a cross-node
// NodePort with SNAT (conntrack read over netlink on the node), and the
// proxy-mode switch of seed 001 (edit the ConfigMap, delete the pods
// labelled k8s-app=kube-proxy, check /proxyMode and the rules).
package conformance
