package cmdline

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// pinnedDigest is the digest a pinned reference ends with: sha256 and
// 64 lowercase hex digits (what `svclab image push` prints).
var pinnedDigest = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// CheckImage says whether an image reference may run on a cluster svclab
// did not create, where the node agent runs it privileged on every node:
// only a digest-pinned reference (NAME@sha256:<64 hex>, with or without
// a tag before the digest; the runtime pulls by the digest) is accepted
// silently. A reference by tag alone is refused with an error saying how
// to get a pinned one, unless allowTag: then it is accepted with a
// warning for the caller to print (the text has no "warning:" prefix).
// A reference that does not parse is an error either way.
func CheckImage(ref string, allowTag bool) (warning string, err error) {
	if strings.TrimSpace(ref) == "" {
		return "", fmt.Errorf("image reference: empty")
	}
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return "", fmt.Errorf("image reference %q: %w", ref, err)
	}
	if d, ok := parsed.(name.Digest); ok {
		if !pinnedDigest.MatchString(d.DigestStr()) {
			return "", fmt.Errorf("image reference %q: digest %s is not sha256:<64 hex> (the digest `svclab image push REGISTRY/REPO` prints)", ref, d.DigestStr())
		}
		return "", nil
	}
	if !allowTag {
		return "", fmt.Errorf("image reference %q is a tag, not digest-pinned: on a cluster svclab did not create, whoever can move the tag would run their code as root on every node (the node agent is privileged); "+
			"give NAME@sha256:<digest> (`svclab image push REGISTRY/REPO` pushes svclab's image and prints it), or pass --%s to run the tag anyway", ref, flagAllowTag)
	}
	return fmt.Sprintf("image %q is not digest-pinned (--%s): whoever can move its tag runs code as root on every node of this cluster; `svclab image push REGISTRY/REPO` prints a pinned reference", ref, flagAllowTag), nil
}
