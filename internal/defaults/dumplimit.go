package defaults

import (
	"fmt"
	"os"
	"strconv"

	"github.com/nuesm/nuesm/ibnetdiscover"
)

// EnvMaxDumpBytes overrides the size limit of the dumps the command-line
// tools read (nuesm's commands other than serve, which takes
// max_dump_bytes from its configuration, and flitsim).
const EnvMaxDumpBytes = "NUESM_MAX_DUMP_BYTES"

// MaxDumpHelp documents the limit in the tools' help.
const MaxDumpHelp = `Dumps are read up to ` + EnvMaxDumpBytes + ` bytes (default 256 MiB),
from a regular file or a pipe (<(ibnetdiscover)); a larger dump, a device
or a named pipe nothing writes to is an input error at once.`

// MaxDumpBytes returns the size limit for dumps: EnvMaxDumpBytes when
// set, else ibnetdiscover.DefaultMaxBytes. A value that is no whole number
// of bytes from 1 up is an error naming the variable, never a silent
// default.
func MaxDumpBytes() (int64, error) {
	v, ok := os.LookupEnv(EnvMaxDumpBytes)
	if !ok || v == "" {
		return ibnetdiscover.DefaultMaxBytes, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q, expected a number of bytes from 1 up", EnvMaxDumpBytes, v)
	}
	return n, nil
}
