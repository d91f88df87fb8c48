package hostturn

import (
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

// Op is a control operation defined once
// (docs/adr/0024-one-definition-per-operation.md): its name, its
// arguments and its handler. The wire's op export (agentrt_op, an op
// frame naming it) and the syscall/js Runtime object's method of the
// same name both run it through Call, and the glue and wasihost reach it
// through that export: no surface of the modules has code of its own
// for it.
type Op struct {
	// Name is the operation's name: the method of the Runtime objects and
	// the name in an op frame.
	Name string
	// Args has a byte per argument, in order: 's' for a string, 'o' for
	// a string or null (absent).
	Args string
	// Sig is the arguments as a refusal names them: "(sessionId: string)".
	Sig string
	// Quiet answers bad arguments with false, not a refusal, as the
	// syscall/js object's first control methods did (cancelRun,
	// deleteSession, revertRun).
	Quiet bool
	// Changes says that the operation changes the session its first
	// argument names other than by appending, so that a copy of its
	// messages kept outside the module is stale after it.
	Changes bool
	// Run runs it on x with its arguments, checked against Args: one
	// value per argument.
	Run func(x *Driver, args []wire.Value) wire.Value
}

// Ops are the operations of the table.
var Ops = []Op{
	{Name: "cancelRun", Args: "s", Sig: "(runId: string)", Quiet: true, Run: func(x *Driver, a []wire.Value) wire.Value {
		return wire.Bool(x.Cancel(a[0].Text))
	}},
	{Name: "deleteSession", Args: "s", Sig: "(sessionId: string)", Quiet: true, Changes: true, Run: func(x *Driver, a []wire.Value) wire.Value {
		return wire.Bool(x.Delete(a[0].Text))
	}},
	{Name: "revertRun", Args: "ss", Sig: "(sessionId: string, runId: string)", Quiet: true, Changes: true, Run: func(x *Driver, a []wire.Value) wire.Value {
		return wire.Bool(x.RevertRun(a[0].Text, a[1].Text))
	}},
}

// Call runs op with args on x. Arguments that do not match op.Args are
// refused with invalid_argument, naming op.Sig (or answer false when op
// is Quiet, unless there are too many); an argument not given counts as
// null.
func (x *Driver) Call(op *Op, args []wire.Value) (wire.Value, error) {
	if len(args) > len(op.Args) {
		return wire.Value{}, op.refusal()
	}
	full := make([]wire.Value, len(op.Args))
	copy(full, args)
	for i, a := range full {
		if a.Kind != wire.ValueText && (a.Kind != wire.ValueNull || op.Args[i] != 'o') {
			if op.Quiet {
				return wire.Bool(false), nil
			}
			return wire.Value{}, op.refusal()
		}
	}
	return op.Run(x, full), nil
}

// refusal is the error of arguments that do not match op.Args.
func (op *Op) refusal() error {
	return core.NewError(core.CodeInvalidArgument, op.Name+": the arguments must be "+op.Sig)
}

// Op decodes an op frame (agentrt_op) and runs the operation of the
// table it names: a value frame of its answer, or a refused frame
// (invalid_argument) for a malformed frame, an operation the table does
// not have, or bad arguments.
func (x *Driver) Op(frame []byte) []byte {
	name, args, err := wire.DecodeOp(frame)
	var v wire.Value
	if err == nil {
		i := 0
		for i < len(Ops) && Ops[i].Name != name {
			i++
		}
		if i == len(Ops) {
			err = core.NewError(core.CodeInvalidArgument, "no operation "+name)
		} else {
			v, err = x.Call(&Ops[i], args)
		}
	}
	if err != nil {
		return x.refuse(err)
	}
	x.out = wire.AppendValue(x.out[:0], v)
	return x.out
}
