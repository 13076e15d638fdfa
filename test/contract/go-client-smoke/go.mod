// The Go client smoke test (see main.go). pvai.local/generated/go-client is generated, not committed:
// `node scripts/generate.mjs --go DIR`, then point the replace below at DIR before building, e.g.
//   go mod edit -replace pvai.local/generated/go-client=DIR && go mod tidy && go build
// (.ci/run does this on a copy of this directory, so the committed file keeps the placeholder path.)
module pvai.local/go-client-smoke

go 1.19

require pvai.local/generated/go-client v0.0.0

replace pvai.local/generated/go-client => ./go-client
