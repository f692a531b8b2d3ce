package buildinfo

// Follows is the Kubernetes release svclab follows: the one whose
// kube-proxy its proxy renders byte for byte (tools/upstream builds that
// release's proxier to compare), whose kubelet a lab's nodes report, and
// whose components svclab's kind node image runs by default. Its API
// types may be newer (Info.KubernetesAPI): they are a superset.
const Follows = "v1.36.4"
