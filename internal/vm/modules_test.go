package vm

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func loadSampleModules(t *testing.T) *moduleIndex {
	t.Helper()
	dep, err := os.Open("testdata/modules.dep")
	if err != nil {
		t.Fatal(err)
	}
	defer dep.Close()
	builtin, err := os.Open("testdata/modules.builtin")
	if err != nil {
		t.Fatal(err)
	}
	defer builtin.Close()
	idx, err := parseModules(dep, builtin)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

// The boot modules of Debian's 6.1 kernel, from an excerpt of its
// modules.dep: every module after what it needs, each once.
func TestResolveBootModules(t *testing.T) {
	got, err := loadSampleModules(t).resolve(bootModules...)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"kernel/drivers/virtio/virtio_pci_legacy_dev.ko",
		"kernel/drivers/virtio/virtio_pci_modern_dev.ko",
		"kernel/drivers/virtio/virtio_ring.ko",
		"kernel/drivers/virtio/virtio.ko",
		"kernel/drivers/virtio/virtio_pci.ko",
		"kernel/drivers/char/virtio_console.ko",
		"kernel/net/9p/9pnet.ko",
		"kernel/net/9p/9pnet_virtio.ko",
		"kernel/fs/netfs/netfs.ko",
		"kernel/fs/fscache/fscache.ko",
		"kernel/fs/9p/9p.ko",
		"kernel/fs/overlayfs/overlay.ko",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("load order:\n got %v\nwant %v", got, want)
	}
}

func TestResolveIPVSSchedulers(t *testing.T) {
	got, err := loadSampleModules(t).resolve("ip_vs_rr", "ip-vs-sh")
	if err != nil {
		t.Fatal(err)
	}
	pos := map[string]int{}
	for i, p := range got {
		pos[moduleName(p)] = i
	}
	if len(got) != 7 {
		t.Fatalf("want 7 modules (rr, sh, ip_vs, nf_conntrack, both defrags, libcrc32c), got %v", got)
	}
	for _, before := range [][2]string{
		{"libcrc32c", "nf_conntrack"}, {"nf_defrag_ipv4", "nf_conntrack"}, {"nf_defrag_ipv6", "nf_conntrack"},
		{"nf_conntrack", "ip_vs"}, {"ip_vs", "ip_vs_rr"}, {"ip_vs", "ip_vs_sh"},
	} {
		if pos[before[0]] >= pos[before[1]] {
			t.Errorf("%s must load before %s: %v", before[0], before[1], got)
		}
	}
}

func TestResolveBuiltinAndMissing(t *testing.T) {
	idx := loadSampleModules(t)
	got, err := idx.resolve("loop", "overlay")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []string{"kernel/fs/overlayfs/overlay.ko"}) {
		t.Fatalf("a built-in module is not loaded: got %v", got)
	}
	if _, err := idx.resolve("nosuchmod"); err == nil || !strings.Contains(err.Error(), "nosuchmod") {
		t.Fatalf("unknown module: err %v", err)
	}
	// 9pnet_rdma needs InfiniBand modules the excerpt lacks.
	if _, err := idx.resolve("9pnet_rdma"); err == nil || !strings.Contains(err.Error(), "needed by 9pnet_rdma") {
		t.Fatalf("missing dependency: err %v", err)
	}
}

func TestParseModulesCompressedAndCycles(t *testing.T) {
	dep := "kernel/a/x-y.ko.xz: kernel/a/z.ko.zst\nkernel/a/z.ko.zst:\n"
	idx, err := parseModules(strings.NewReader(dep), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := idx.resolve("x_y")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []string{"kernel/a/z.ko.zst", "kernel/a/x-y.ko.xz"}) {
		t.Fatalf("got %v", got)
	}
	cyc, _ := parseModules(strings.NewReader("a.ko: b.ko\nb.ko: a.ko\n"), nil)
	if _, err := cyc.resolve("a"); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("cycle: err %v", err)
	}
	if _, err := parseModules(strings.NewReader("no colon here\n"), nil); err == nil {
		t.Fatal("a malformed modules.dep line is an error")
	}
}

func TestListsModule(t *testing.T) {
	if !listsModule("testdata/modules.dep", "ip_vs") || listsModule("testdata/modules.dep", "ip_vs_wrr") {
		t.Fatal("listsModule reads modules.dep lines by module name")
	}
	t.Logf("this host: KernelHasIPVS() = %v", KernelHasIPVS())
}
