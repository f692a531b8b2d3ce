package nodeimage

import (
	"slices"
	"strings"
	"testing"

	"github.com/svclab/svclab/labs/kind/internal/flannel"
)

// The images get exactly the names the manifest uses, with upstream's
// file places, so the manifest applies unchanged.
func TestFlannelImagesAreNamedAsTheManifestSays(t *testing.T) {
	info, err := flannel.Parse(flannel.Manifest())
	if err != nil {
		t.Fatal(err)
	}
	imgs := flannelImages(info, "/c/flanneld/bin", "/c/plugin/bin", "/c/userland.tar", "k")
	if len(imgs) != 2 || imgs[0].ref != "ghcr.io/flannel-io/flannel:v0.28.10" || imgs[1].ref != "ghcr.io/flannel-io/flannel-cni-plugin:v1.9.1-flannel3" {
		t.Fatalf("image refs %q, %q", imgs[0].ref, imgs[1].ref)
	}
	paths := func(img flannelImage) (ps []string) {
		for _, l := range img.layers {
			if l.Tar != "" {
				ps = append(ps, "tar:"+l.Tar)
			} else {
				ps = append(ps, l.Path+"<"+l.Source)
			}
		}
		return ps
	}
	if got, want := paths(imgs[0]), []string{"tar:/c/userland.tar", "/opt/bin/flanneld</c/flanneld/bin/flanneld", "/opt/bin/install-conf</c/flanneld/bin/install-conf"}; !slices.Equal(got, want) {
		t.Errorf("flannel image layers %q, want %q", got, want)
	}
	if got, want := paths(imgs[1]), []string{"tar:/c/userland.tar", "/flannel</c/plugin/bin/flannel"}; !slices.Equal(got, want) {
		t.Errorf("plugin image layers %q, want %q", got, want)
	}
	if !slices.Contains(imgs[0].changes, `ENTRYPOINT ["/opt/bin/flanneld"]`) || !slices.Contains(imgs[0].changes, "LABEL "+recipeLabel+"="+imgs[0].key) {
		t.Errorf("flannel image changes %q", imgs[0].changes)
	}
	if imgs[0].key == imgs[1].key {
		t.Error("both images have one recipe key")
	}
	other := flannelImages(info, "/c/flanneld2/bin", "/c/plugin/bin", "/c/userland.tar", "k")
	if other[0].key == imgs[0].key || other[1].key != imgs[1].key {
		t.Error("recipe keys do not follow what the images are made of")
	}
}

func TestFlannelPrograms(t *testing.T) {
	p := flanneldProgram()
	mod := p.goMod()
	for _, want := range []string{"require github.com/flannel-io/flannel v0.28.10",
		"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc => github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc v1.0.1000"} {
		if !strings.Contains(mod, want) {
			t.Errorf("flanneld's go.mod lacks %q:\n%s", want, mod)
		}
	}
	cmd := strings.Join(p.buildCommand("go", "/out"), " ")
	for _, want := range []string{"-X github.com/flannel-io/flannel/pkg/version.Version=v0.28.10", "-extldflags=-static",
		" github.com/flannel-io/flannel github.com/flannel-io/flannel/cmd/install_conf"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("flanneld's build command lacks %q: %s", want, cmd)
		}
	}
	if !slices.Contains(p.buildEnv(), "CGO_ENABLED=1") {
		t.Errorf("flanneld builds without cgo (its UDP backend needs it): %v", p.buildEnv())
	}
	pl := flannelPluginProgram()
	if !strings.Contains(pl.goMod(), "require github.com/containernetworking/plugins v0.9.1") ||
		!strings.HasSuffix(strings.Join(pl.buildCommand("go", "/out"), " "), " github.com/containernetworking/plugins/plugins/meta/flannel") ||
		!slices.Contains(pl.buildEnv(), "CGO_ENABLED=0") {
		t.Errorf("plugin program %+v", pl)
	}
}
