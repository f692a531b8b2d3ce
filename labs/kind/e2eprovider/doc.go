// Package e2eprovider makes svclab's kind backend (package kind) a
// cluster provider for sigs.k8s.io/e2e-framework: Provider implements
// types.E2EClusterProviderWithImageLoader with kind's Go API and svclab's
// offline node image, pod network and proxy — no kind binary is run.
//
//	p := e2eprovider.New().WithCNI(cni.FlannelVXLAN).WithOutput(os.Stderr)
//	testenv.Setup(
//		envfuncs.CreateClusterWithConfig(p, "e2e", "clusters/kind/flannel-vxlan.yaml"),
//		p.UseClient(), // the env's client must dial from svclab's namespace
//	)
//	testenv.Finish(envfuncs.DestroyCluster("e2e"))
//
// svclab always needs a kind v1alpha4 Cluster config: use
// CreateWithConfig (envfuncs.CreateClusterWithConfig), or Create with
// "--config", file.
//
// When svclab runs its own dockerd, the cluster's API server listens on
// 127.0.0.1:PORT inside the network namespace svclab-docker, which the
// test process's namespace cannot reach. The kubeconfig file Provider
// writes is kind's as is (for `ip netns exec svclab-docker kubectl …`);
// KubernetesRestConfig, Client and UseClient give clients that dial from
// that namespace (package netnsdial), and WaitForControlPlane uses such a
// client when the one it is given cannot get there. With the user's own
// Docker everything is reachable directly and nothing changes.
package e2eprovider
