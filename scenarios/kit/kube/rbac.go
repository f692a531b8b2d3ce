package kube

import "github.com/svclab/svclab/scenarios/kit/kube/access"

// The RBAC table and its types live in package access (the CLI prints them
// without this package's libraries); these names keep the suite's code
// short.
type (
	Rule        = access.Rule
	Role        = access.Role
	apiRequest  = access.Request
	RBACOptions = access.RBACOptions
)

// The roles' names.
const (
	ClusterRoleName     = access.ClusterRoleName
	ProxyConfigRoleName = access.ProxyConfigRoleName
	DisruptiveRoleName  = access.DisruptiveRoleName
)

// Permissions and RBACManifest: see package access.
var (
	Permissions  = access.Permissions
	RBACManifest = access.RBACManifest
)

func grants(roles []Role, req apiRequest) (access.Grant, bool) { return access.Grants(roles, req) }
