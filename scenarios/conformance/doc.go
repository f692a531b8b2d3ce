// Package conformance is the scenarios that run unchanged on every
// backend: svclab's netns labs (`go test ./scenarios/conformance`, part of
// `make test`) and any Kubernetes cluster (`svclab conformance
// --kubeconfig FILE`, and `make e2e-kind` on kind clusters svclab
// creates through e2e-framework). The specs see only a kit.Target; Setup
// says which one, before RunSpecs.
//
// The scenarios: a two-pod 50/50 split and a three-pod ladder (traffic
// from a pod and from outside the pod network, counted with /hostname;
// rules, counters and conntrack checked on the node), a cross-node
// NodePort with SNAT (conntrack read over netlink on the node), and the
// proxy-mode switch of seed 001 (edit the ConfigMap, delete the pods
// labelled k8s-app=kube-proxy, check /proxyMode and the rules).
package conformance
