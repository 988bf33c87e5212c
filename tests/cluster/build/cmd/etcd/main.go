// Command etcd is etcd's own server command, built from the go.etcd.io/etcd/server/v3 module at
// the version go.mod pins (the one k8s.io/kubernetes requires). It is what etcd's main.go does
// upstream (go.etcd.io/etcd/v3 main.go calls etcdmain.Main), so every etcd flag works.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
