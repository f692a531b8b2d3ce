// Package modeltest builds the input of proxy/model for tests: Generate
// turns any bytes into a small set of Services and EndpointSlices, so that
// a fuzz target reaches the renderers with structurally valid objects
// rather than with YAML the decoder mostly refuses.
package modeltest
