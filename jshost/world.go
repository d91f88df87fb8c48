package jshost

import (
	"io"
	"math"
	"time"
)

// world is the JavaScript-like object world of one Instance: its globals,
// the prototype methods of each kind of object, and the microtask queue.
// It is used only from the instance's event loop.
type world struct {
	global *Object
	goObj  *Object // the object wasm_exec.js calls "this" (reference 6)

	microtasks []func()

	stdout, stderr io.Writer

	protoObject, protoArray, protoFunction, protoUint8,
	protoPromise, protoError, protoDate map[string]*Function

	ctorObject, ctorArray, ctorFunction, ctorUint8,
	ctorPromise, ctorDate *Function

	// Hooks the Instance provides.
	wrap       func(id uint32) *Function // _makeFuncWrapper
	setTimer   func(delay time.Duration, fire func()) int64
	clearTimer func(id int64)
}

// native returns a built-in function.
func native(name string, call func(this Value, args []Value) (Value, error)) *Function {
	return &Function{Name: name, call: call}
}

func arg(args []Value, i int) Value {
	if i < len(args) {
		return args[i]
	}
	return Undefined
}

// goFunction wraps f as a JavaScript function; see Func.
func goFunction(f Func) *Function {
	return &Function{call: func(this Value, args []Value) (res Value, err error) {
		defer func() {
			if r := recover(); r != nil {
				if g, ok := r.(guestAbort); ok {
					panic(g)
				}
				res, err = nil, throwf("Error", "jshost: Go function panicked: %v", r)
			}
		}()
		out, ferr := f(this, args)
		if ferr != nil {
			return nil, asException(ferr)
		}
		v, cerr := ToJS(out)
		if cerr != nil {
			return nil, throwf("TypeError", "%v", cerr)
		}
		return v, nil
	}}
}

// get reads v[k] like Reflect.get: own properties, then the methods of
// v's kind. Primitives other than strings have no properties here.
func (w *world) get(v Value, k string) Value {
	switch x := v.(type) {
	case string:
		if k == "length" {
			return float64(jsLength(x))
		}
		return Undefined
	case *Function:
		if k == "name" {
			if e, ok := x.getOwn(k); ok {
				return e
			}
			return x.Name
		}
	}
	if !isObject(v) {
		return Undefined
	}
	if e := getOwnOrIndex(v, k); e != Undefined {
		return e
	}
	if b := bagOf(v); b != nil {
		if _, ok := b.getOwn(k); ok { // an own property holding undefined
			return Undefined
		}
	}
	var proto map[string]*Function
	switch x := v.(type) {
	case *Object:
		switch {
		case x.IsError():
			proto = w.protoError
		case x.Class == "Date":
			proto = w.protoDate
		}
	case *Array:
		proto = w.protoArray
	case *Function:
		proto = w.protoFunction
	case *Uint8Array:
		proto = w.protoUint8
	case *Promise:
		proto = w.protoPromise
	}
	if f, ok := proto[k]; ok {
		return f
	}
	if f, ok := w.protoObject[k]; ok {
		return f
	}
	return Undefined
}

// set writes v[k] = x like Reflect.set; writes to primitives are ignored.
func (w *world) set(v Value, k string, x Value) {
	if b := bagOf(v); b != nil && b.frozen {
		return
	}
	if i, ok := arrayIndex(k); ok && setIndex(v, i, x) {
		return
	}
	if a, ok := v.(*Array); ok && k == "length" {
		n := toNumber(x)
		if n >= 0 && n <= maxArrayLength && n == math.Trunc(n) {
			l := int(n)
			for len(a.Elems) < l {
				a.Elems = append(a.Elems, Undefined)
			}
			a.Elems = a.Elems[:l]
		}
		return
	}
	if b := bagOf(v); b != nil {
		b.setOwn(k, x)
	}
}

func (w *world) del(v Value, k string) {
	if b := bagOf(v); b != nil {
		b.delOwn(k)
	}
}

// call applies f to this and args: Reflect.apply.
func (w *world) call(f Value, this Value, args []Value) (Value, error) {
	fn, ok := f.(*Function)
	if !ok || fn.call == nil {
		return nil, throwf("TypeError", "%s is not a function", typeOf(f))
	}
	return fn.call(this, args)
}

// construct is Reflect.construct.
func (w *world) construct(f Value, args []Value) (Value, error) {
	fn, ok := f.(*Function)
	if !ok || fn.construct == nil {
		return nil, throwf("TypeError", "%s is not a constructor", typeOf(f))
	}
	return fn.construct(args)
}

// instanceOf is v instanceof t.
func (w *world) instanceOf(v, t Value) bool {
	fn, ok := t.(*Function)
	if !ok || fn.instance == nil {
		return false
	}
	return fn.instance(v)
}

func (w *world) enqueue(task func()) { w.microtasks = append(w.microtasks, task) }

// drain runs microtasks until the queue is empty.
func (w *world) drain() {
	for i := 0; i < len(w.microtasks); i++ {
		t := w.microtasks[i]
		w.microtasks[i] = nil
		t()
	}
	w.microtasks = w.microtasks[:0]
}
