package kind

import "errors"

var errNoDocker = errors.New("no Docker daemon runs (svclab starts its own with create cluster)")
