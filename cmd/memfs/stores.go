package main

import (
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/backend/location"
)

// stores are the kinds of store --store names, in the order its errors
// list them. This is the one file of the command that names a store
// package (internal/lint holds it): each owns how its spec reads and how
// it opens.
var stores = newStores()

func newStores() *location.Registry {
	r := new(location.Registry)
	r.Register(badgerstore.NewFactory())
	r.Register(dirstore.NewFactory())
	r.Register(etcdstore.NewFactory())
	return r
}
