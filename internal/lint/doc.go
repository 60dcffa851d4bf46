// Package lint holds tests that enforce the project's conventions, as
// pebble's internal/lint does: who may import what (TestForbiddenImports),
// every byte to disk through session/outbound.go (TestOneWayOut), fsnode
// never touching the store (TestFsnodeNeverTouchesTheStore), the
// session knowing no skills (TestSessionKnowsNoSkills), the command naming
// store packages in one file only (TestCommandNamesStoresInOneFile), a
// backend/location that links no store (TestLocationImportsNoStore), and a
// dir-store program that links neither etcd nor gRPC
// (TestDirStoreProgramLinksNoEtcd), redact linking only go-toml
// (TestRedactLinksOnlyTOML), gitleaks and gocyclo for tests only
// (TestTestOnlyModules), search's file format apart from the session
// (TestSearchLinksNoSession), no function over cyclomatic complexity 30
// (TestCyclomaticComplexity), the docs held to memfs --help
// (TestDocsMatchHelp), and the README's budget and links
// (TestReadmeLinks). It has no other code.
//
// # Concurrency
//
// Nothing to share: the tests run go list (and go build, memfs --help) in
// a subprocess and parse source and Markdown files, each on its own data.
package lint
