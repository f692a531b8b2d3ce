package hostprog

import (
	"slices"
	"sort"
)

// Use is a command (or a family of commands) that runs host programs.
type Use string

const (
	// Lab is `svclab create lab`, `apply`, `delete lab`, `exec` and the lab
	// scenarios: namespaces, the proxies' iptables in them.
	Lab Use = "svclab create lab/apply (the labs and their proxies)"
	// Proxy is `svclab proxy`, the embedded kube-proxy (in iptables and
	// ipvs mode alike: ipvs mode writes its filter rules with
	// iptables-restore; IPVS and ipset go through netlink).
	Proxy Use = "svclab proxy"
	// Workshop is `svclab workshop` and `svclab tour` (make lab, make
	// lab-nodeport, make lesson): a lesson's steps and checks run these
	// programs in the lab's namespaces (tools/workshop.HostPrograms).
	Workshop Use = "svclab workshop"
	// Cluster is `svclab create cluster` and `svclab kind build-image`: the
	// offline node image (Go builds, debootstrap, chroot) and svclab's
	// own dockerd in its namespace.
	Cluster Use = "svclab create cluster/kind build-image"
	// Flannel is `svclab create cluster --cni flannel`: besides Cluster's
	// programs, a C compiler for flanneld (its UDP backend is cgo).
	Flannel Use = "svclab create cluster --cni flannel"
	// VM is `svclab vm run/prepare` and the tests that run in the VM: qemu
	// boots Debian's kernel, unpacked from its .deb.
	VM Use = "svclab vm (and the VM tests)"
	// Test is what the test suite runs besides the above (make test).
	Test Use = "the tests (make test)"
)

// Program names, as looked up in PATH. Call sites may use these instead of
// string literals; the test that finds executed programs reads both.
const (
	IP                     = "ip"
	Bridge                 = "bridge"
	IPTables               = "iptables"
	IPTablesSave           = "iptables-save"
	IPTablesRestore        = "iptables-restore"
	IPTablesLegacy         = "iptables-legacy"
	IPTablesLegacySave     = "iptables-legacy-save"
	IPTablesLegacyRestore  = "iptables-legacy-restore"
	IPTablesNFT            = "iptables-nft"
	IPTablesNFTSave        = "iptables-nft-save"
	IPTablesNFTRestore     = "iptables-nft-restore"
	IP6Tables              = "ip6tables"
	IP6TablesSave          = "ip6tables-save"
	IP6TablesRestore       = "ip6tables-restore"
	IP6TablesLegacy        = "ip6tables-legacy"
	IP6TablesLegacySave    = "ip6tables-legacy-save"
	IP6TablesLegacyRestore = "ip6tables-legacy-restore"
	IP6TablesNFT           = "ip6tables-nft"
	IP6TablesNFTSave       = "ip6tables-nft-save"
	IP6TablesNFTRestore    = "ip6tables-nft-restore"
	NFT                    = "nft"
	Conntrack              = "conntrack"
	IPSet                  = "ipset"
	IPVSAdm                = "ipvsadm"
	Modprobe               = "modprobe"
	Depmod                 = "depmod"
	Curl                   = "curl"
	Getent                 = "getent"
	Sysctl                 = "sysctl"
	Sh                     = "sh"
	Cat                    = "cat"
	Chroot                 = "chroot"
	Tar                    = "tar"
	Ldd                    = "ldd"
	NSEnter                = "nsenter"
	Unshare                = "unshare"
	Debootstrap            = "debootstrap"
	Docker                 = "docker"
	Dockerd                = "dockerd"
	JQ                     = "jq"
	Go                     = "go"
	GCC                    = "gcc"
	QEMU                   = "qemu-system-x86_64"
	XZ                     = "xz"
	Zstd                   = "zstd"
	AptGet                 = "apt-get"
	DpkgDeb                = "dpkg-deb"
	Chromium               = "chromium"
)

// Program is one external program svclab runs on the host.
type Program struct {
	Name string
	// Package is the Debian package that provides it; empty for Go, which
	// Debian 12 ships too old (the Go installer puts it in /usr/local/go).
	Package string
	// Uses are the commands that need it and check for it before they
	// start. None: run only when present (modprobe -q, depmod), or by
	// what the tests' own helpers run.
	Uses []Use
	// Why says what runs it, for a reader and for the error.
	Why string
}

// Programs is every external program svclab runs on the host.
var Programs = []Program{
	{IP, "iproute2", []Use{Lab, Proxy, Cluster, Workshop}, "ip netns exec/add/delete: every command in a lab namespace, svclab's dockerd namespace"},
	{Bridge, "iproute2", []Use{Workshop}, "bridge fdb and bridge link: the VXLAN forwarding entries and cni0's ports seed 004's lesson shows"},
	{IPTables, "iptables", []Use{Lab, Proxy, Workshop}, "the proxy's version probe and chain checks; the lessons show chains"},
	{IPTablesSave, "iptables", []Use{Lab, Proxy, Workshop}, "the proxy reads its rules back; the lessons and scenarios show them"},
	{IPTablesRestore, "iptables", []Use{Lab, Proxy}, "the proxy writes its rules in one iptables-restore --noflush call"},
	{IPTablesLegacy, "iptables", []Use{Lab}, "the proxy with iptablesBackend: legacy"},
	{IPTablesLegacySave, "iptables", []Use{Lab}, "the proxy with iptablesBackend: legacy"},
	{IPTablesLegacyRestore, "iptables", []Use{Lab}, "the proxy with iptablesBackend: legacy"},
	{IPTablesNFT, "iptables", []Use{Lab}, "the proxy with iptablesBackend: nft"},
	{IPTablesNFTSave, "iptables", []Use{Lab}, "the proxy with iptablesBackend: nft"},
	{IPTablesNFTRestore, "iptables", []Use{Lab}, "the proxy with iptablesBackend: nft"},
	{IP6Tables, "iptables", []Use{Lab, Proxy}, "the proxy's IPv6 version probe and chain checks (an ipv6 or dual lab)"},
	{IP6TablesSave, "iptables", []Use{Lab, Proxy, Workshop}, "the proxy reads its IPv6 rules back; the dual-stack lesson shows them"},
	{IP6TablesRestore, "iptables", []Use{Lab, Proxy}, "the proxy writes its IPv6 rules in one ip6tables-restore --noflush call"},
	{IP6TablesLegacy, "iptables", []Use{Lab}, "the IPv6 proxy with iptablesBackend: legacy"},
	{IP6TablesLegacySave, "iptables", []Use{Lab}, "the IPv6 proxy with iptablesBackend: legacy"},
	{IP6TablesLegacyRestore, "iptables", []Use{Lab}, "the IPv6 proxy with iptablesBackend: legacy"},
	{IP6TablesNFT, "iptables", []Use{Lab}, "the IPv6 proxy with iptablesBackend: nft"},
	{IP6TablesNFTSave, "iptables", []Use{Lab}, "the IPv6 proxy with iptablesBackend: nft"},
	{IP6TablesNFTRestore, "iptables", []Use{Lab}, "the IPv6 proxy with iptablesBackend: nft"},
	{NFT, "nftables", []Use{Lab, Proxy, Workshop}, "the proxy in nftables mode writes its table through knftables, which runs nft; `svclab get leftovers` and --cleanup list and delete it; the conformance scenarios check kind nodes; seed-002's lesson lists the table"},
	{Conntrack, "conntrack", []Use{Workshop}, "conntrack -L: the lessons show the connections"},
	{IPSet, "ipset", []Use{Test, Workshop}, "the tests list the ipvs mode's sets (the proxy itself uses netlink)"},
	{IPVSAdm, "ipvsadm", []Use{Test, Workshop}, "the tests list IPVS services (the proxy itself uses netlink); svclab bench dataplane's probe in ipvs mode"},
	{Modprobe, "kmod", nil, "modprobe -q ip_vs, br_netfilter, dummy: best effort, the kernel call after it says"},
	{Depmod, "kmod", nil, "the VM image's modules.dep, when the guest's own depmod cannot run"},
	{Sysctl, "procps", []Use{Test}, "the labs' plans print their steps as `ip netns exec NS sysctl -qw …` for a reader to replay (svclab itself writes /proc/sys); the tests read and set sysctls in lab namespaces with it"},
	{Curl, "curl", []Use{Test}, "the tests fetch from pods and metrics endpoints"},
	{Getent, "libc-bin", []Use{Test, Workshop}, "the cluster DNS tests and the dual-stack lesson resolve names in lab hosts through libc, as a pod's program does (getent hosts)"},
	{Sh, "dash", []Use{Workshop}, "sh -c: a lesson's pipelines, `svclab edit configmap`'s $EDITOR"},
	{Cat, "coreutils", []Use{Workshop}, "cat /proc/sys/…: a lesson shows a sysctl in a namespace"},
	{Chroot, "coreutils", []Use{Cluster}, "the node image's root filesystem is set up with chroot"},
	{Tar, "tar", []Use{Cluster}, "the node root filesystem is packed as rootfs.tar"},
	{Ldd, "libc-bin", []Use{Cluster}, "the component images check that a binary is static"},
	{NSEnter, "util-linux", []Use{Cluster}, "svclab's dockerd starts in its namespace through nsenter"},
	{Unshare, "util-linux", []Use{Cluster}, "debootstrap runs in a mount namespace of its own, so its /proc in the target goes with it"},
	{Debootstrap, "debootstrap", []Use{Cluster}, "the kind node's Debian root filesystem"},
	{Docker, "docker.io", []Use{Cluster}, "the Docker CLI: images, containers of the kind nodes"},
	{Dockerd, "docker.io", nil, "svclab's own Docker daemon, installed when no Docker answers (labs/kind/internal/dockerhost)"},
	{JQ, "jq", nil, "svclab-runc edits OCI specs with jq, on hosts without CAP_SYS_RESOURCE (labs/kind/internal/dockerhost)"},
	{Go, "", []Use{Test}, "the tests build svclab; the node image builds Kubernetes, etcd and CoreDNS (nodeimage's goBinary looks in $GO, PATH and /usr/local/go/bin)"},
	{GCC, "gcc", []Use{Flannel}, "cgo of go build: flanneld's UDP backend is C on amd64, linked statically against libc6-dev's libc.a (labs/kind/internal/nodeimage, --cni flannel)"},
	{QEMU, "qemu-system-x86", []Use{VM}, "boots the VM"},
	{XZ, "xz-utils", []Use{VM}, "uncompresses the VM's kernel and modules"},
	{Zstd, "zstd", nil, "uncompresses the VM's kernel and modules when Debian's are zstd (newer than 12)"},
	{AptGet, "apt", []Use{VM}, "fetches the VM's packages (apt-get download); installs missing programs"},
	{DpkgDeb, "dpkg", []Use{VM}, "unpacks the VM's packages"},
	{Chromium, "chromium", []Use{Test}, "the `svclab ui` page test loads the page in headless Chromium and reads the DOM its script built (tools/ui); the README's screenshot"},
}

// Essential are the packages of the programs above that every Debian
// system has (Essential: yes, or required by apt itself): the Makefile
// need not install them. Ensure still checks their programs.
var Essential = []string{"apt", "coreutils", "dash", "dpkg", "libc-bin", "tar", "util-linux"}

// Lookup returns the declared program name.
func Lookup(name string) (Program, bool) {
	i := slices.IndexFunc(Programs, func(p Program) bool { return p.Name == name })
	if i < 0 {
		return Program{}, false
	}
	return Programs[i], true
}

// Needs returns the programs use needs, in table order.
func Needs(use Use) []string {
	var names []string
	for _, p := range Programs {
		if slices.Contains(p.Uses, use) {
			names = append(names, p.Name)
		}
	}
	return names
}

// Packages returns the Debian packages that provide the programs of uses
// (all declared programs with no uses given), sorted, without duplicates.
func Packages(uses ...Use) []string {
	seen := map[string]bool{}
	for _, p := range Programs {
		if p.Package == "" || seen[p.Package] {
			continue
		}
		if len(uses) == 0 || slices.ContainsFunc(uses, func(u Use) bool { return slices.Contains(p.Uses, u) }) {
			seen[p.Package] = true
		}
	}
	pkgs := make([]string, 0, len(seen))
	for p := range seen {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	return pkgs
}
