package main

import (
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/backend/location"
	"github.com/memfs/memfs/backend/memstore"
)

// stores are the kinds of store --store names, in the order its errors
// list them. This is the one file of the command that names a store
// package (internal/lint holds it): each owns how its spec reads and how
// it opens.
var stores = newStores()

func newStores(more ...location.Factory) *location.Registry {
	r := new(location.Registry)
	for _, f := range append([]location.Factory{badgerstore.NewFactory(), dirstore.NewFactory(), etcdstore.NewFactory()}, more...) {
		r.Register(f)
	}
	return r
}

// routeStores are the kinds of store --route names: --store's, and mem:,
// a store in memory only (a working route).
var routeStores = newStores(memstore.NewFactory())
