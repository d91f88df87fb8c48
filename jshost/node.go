package jshost

import (
	"io"
	"strings"
)

func enosys() *Object {
	e := newError("Error", "not implemented")
	e.Set("code", "ENOSYS")
	return e
}

// initNode installs the fs, process and path globals that Go's syscall
// and os packages read, as wasm_exec.js defines them when they are absent:
// only writes to stdout and stderr work.
func (w *world) initNode() {
	fs := NewObject()
	consts := NewObject()
	for _, k := range []string{"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND", "O_EXCL", "O_DIRECTORY"} {
		consts.Set(k, float64(-1))
	}
	fs.Set("constants", consts)
	writeSync := func(args []Value) (int, error) {
		fd := toNumber(arg(args, 0))
		buf, ok := arg(args, 1).(*Uint8Array)
		if !ok {
			return 0, throwf("TypeError", "buffer must be a Uint8Array")
		}
		var out io.Writer
		switch fd {
		case 1:
			out = w.stdout
		case 2:
			out = w.stderr
		default:
			e := newError("Error", "bad file descriptor")
			e.Set("code", "EBADF")
			return 0, newException(e)
		}
		out.Write(buf.Bytes)
		return len(buf.Bytes), nil
	}
	fs.Set("writeSync", native("writeSync", func(_ Value, args []Value) (Value, error) {
		n, err := writeSync(args)
		if err != nil {
			return nil, err
		}
		return float64(n), nil
	}))
	fs.Set("write", native("write", func(_ Value, args []Value) (Value, error) {
		// write(fd, buf, offset, length, position, callback)
		cb := arg(args, 5)
		buf, _ := arg(args, 1).(*Uint8Array)
		if buf == nil || toNumber(arg(args, 2)) != 0 || toNumber(arg(args, 3)) != float64(len(buf.Bytes)) || arg(args, 4) != Null {
			return w.call(cb, Undefined, []Value{enosys()})
		}
		n, err := writeSync(args)
		if err != nil {
			return w.call(cb, Undefined, []Value{asException(err).Value})
		}
		return w.call(cb, Undefined, []Value{Null, float64(n)})
	}))
	fs.Set("fsync", native("fsync", func(_ Value, args []Value) (Value, error) {
		return w.call(arg(args, 1), Undefined, []Value{Null})
	}))
	for _, name := range []string{"chmod", "chown", "close", "fchmod", "fchown", "fstat", "ftruncate",
		"lchown", "link", "lstat", "mkdir", "open", "read", "readdir", "readlink", "rename", "rmdir",
		"stat", "symlink", "truncate", "unlink", "utimes"} {
		fs.Set(name, native(name, func(_ Value, args []Value) (Value, error) {
			if len(args) == 0 {
				return nil, newException(enosys())
			}
			return w.call(args[len(args)-1], Undefined, []Value{enosys()})
		}))
	}
	w.global.Set("fs", fs)

	proc := NewObject()
	for _, name := range []string{"getuid", "getgid", "geteuid", "getegid"} {
		proc.Set(name, native(name, func(Value, []Value) (Value, error) { return float64(-1), nil }))
	}
	for _, name := range []string{"getgroups", "umask", "cwd", "chdir"} {
		proc.Set(name, native(name, func(Value, []Value) (Value, error) { return nil, newException(enosys()) }))
	}
	proc.Set("pid", float64(-1))
	proc.Set("ppid", float64(-1))
	w.global.Set("process", proc)

	path := NewObject()
	path.Set("resolve", native("resolve", func(_ Value, args []Value) (Value, error) {
		parts := make([]string, len(args))
		for i, a := range args {
			parts[i] = toString(a)
		}
		return strings.Join(parts, "/"), nil
	}))
	w.global.Set("path", path)
}
