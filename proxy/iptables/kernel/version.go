package kernel

import (
	"fmt"
	"regexp"
	"strconv"
)

// Mode is the kernel interface an iptables binary drives.
type Mode string

const (
	// ModeLegacy is the x_tables interface ("iptables v1.8.9 (legacy)").
	// iptables before 1.8 print no mode and are legacy too.
	ModeLegacy Mode = "legacy"
	// ModeNFTables is iptables-nft, which translates to nf_tables
	// ("iptables v1.8.9 (nf_tables)").
	ModeNFTables Mode = "nf_tables"
)

// Version is the parsed output of `iptables --version`.
type Version struct {
	Major, Minor, Patch int
	Mode                Mode
}

func (v Version) String() string {
	return fmt.Sprintf("v%d.%d.%d (%s)", v.Major, v.Minor, v.Patch, v.Mode)
}

// AtLeast compares with major.minor.patch.
func (v Version) AtLeast(major, minor, patch int) bool {
	if v.Major != major {
		return v.Major > major
	}
	if v.Minor != minor {
		return v.Minor > minor
	}
	return v.Patch >= patch
}

// HasRandomFully reports whether MASQUERADE accepts --random-fully, which
// appeared in iptables 1.6.2. Upstream: RandomFullyMinVersion.
func (v Version) HasRandomFully() bool { return v.AtLeast(1, 6, 2) }

var versionPattern = regexp.MustCompile(`v(\d+)\.(\d+)(?:\.(\d+))?(?:\s+\(([a-z_]+)\))?`)

// ParseVersion reads `iptables --version` output such as
// "iptables v1.8.9 (nf_tables)".
func ParseVersion(output string) (Version, error) {
	m := versionPattern.FindStringSubmatch(output)
	if m == nil {
		return Version{}, fmt.Errorf("iptables version output %q: no version found", output)
	}
	var v Version
	v.Major, _ = strconv.Atoi(m[1])
	v.Minor, _ = strconv.Atoi(m[2])
	if m[3] != "" {
		v.Patch, _ = strconv.Atoi(m[3])
	}
	switch m[4] {
	case "", "legacy":
		v.Mode = ModeLegacy
	case "nf_tables":
		v.Mode = ModeNFTables
	default:
		return Version{}, fmt.Errorf("iptables version output %q: unknown mode %q", output, m[4])
	}
	return v, nil
}
