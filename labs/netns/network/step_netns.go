package network

import "fmt"

// AddNetns creates a named network namespace.
//
//	ip netns add <Name>
type AddNetns struct {
	Name string
}

func (s AddNetns) Namespace() string { return s.Name }
func (s AddNetns) Command() string   { return "ip netns add " + s.Name }

func (s AddNetns) apply(x *executor) error {
	if err := createNamedNetns(s.Name); err != nil {
		return err
	}
	x.created = append(x.created, s.Name)
	if _, err := x.conn(s.Name); err != nil {
		return fmt.Errorf("open new namespace: %w", err)
	}
	return nil
}
