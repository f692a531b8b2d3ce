package nodeimage

import "github.com/svclab/svclab/labs/kind/internal/flannel"

// tencentVPCReplace: flanneld links every backend, and the module proxy
// refuses the version of the Tencent Cloud VPC SDK its tencentvpc backend
// requires (v1.3.188); an older published version of the same module
// builds, and that backend is never used here (svclab runs vxlan).
var tencentVPCReplace = map[string]string{"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc": "v1.0.1000"}

// flanneldProgram is flanneld (the module's root package) and install-conf
// (the manifest's install-cni step), built as upstream's Makefile and
// Dockerfile build them: cgo on amd64 for the UDP backend, static, the
// version in pkg/version. (Go's own DNS resolver is used at run time: the
// image has no nsswitch.conf asking for glibc's.)
func flanneldProgram() goProgram {
	return goProgram{
		Module:   flannel.Module,
		Version:  flannel.Version,
		Replace:  tencentVPCReplace,
		Packages: []string{flannel.Module, flannel.Module + "/cmd/install_conf"},
		LDFlags:  "-X " + flannel.Module + "/pkg/version.Version=" + flannel.Version,
		CGO:      true,
		Rename:   map[string]string{"flannel": "flanneld", "install_conf": "install-conf"},
	}
}

// flannelPluginProgram is the flannel CNI plugin, named "flannel" as
// upstream's image has it (/flannel).
func flannelPluginProgram() goProgram {
	return goProgram{Module: flannel.PluginModule, Version: flannel.PluginVersion, Packages: []string{flannel.PluginPackage}}
}
