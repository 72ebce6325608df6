// Package node holds, in its test, the shim a WuKongIM maintainer writes in
// internal/access/node to keep the node package's unexported codec names
// over go/deliverytag (docs/GO.md, "Swapping the import").
package node
