package mountclient_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/memfs/memfs/mountclient"
)

// Read a note through the caller's memfs mount at ~/memory, and what its
// status says.
func Example() {
	home, _ := os.UserHomeDir()
	c, err := mountclient.Open(filepath.Join(home, "memory"), mountclient.Own)
	if err != nil {
		fmt.Println(err) // not a live memfs mount: nothing was done through it
		return
	}
	note, err := c.Cat("memory/global.md")
	if err != nil {
		fmt.Println(err)
		return
	}
	st, _ := c.Status()
	fmt.Printf("%d bytes from %s, served by process %d (%d keys)\n", len(note), st.Store, c.PID, st.KeysIndexed)
}
