package jshost

// settle fulfils or rejects p once.
func (w *world) settle(p *Promise, st promiseState, v Value) {
	if p.state != pending {
		return
	}
	p.state, p.value = st, v
	rs := p.reactions
	p.reactions = nil
	for _, r := range rs {
		w.enqueue(r)
	}
}

// resolvers returns the resolve and reject functions of p; only the first
// call of either has an effect.
func (w *world) resolvers(p *Promise) (resolve, reject func(Value)) {
	done := false
	resolve = func(v Value) {
		if done {
			return
		}
		done = true
		w.resolveWith(p, v)
	}
	reject = func(v Value) {
		if done {
			return
		}
		done = true
		w.settle(p, rejected, v)
	}
	return resolve, reject
}

// resolveWith resolves p with v, adopting v's state if v is a thenable.
func (w *world) resolveWith(p *Promise, v Value) {
	if v == Value(p) {
		w.settle(p, rejected, newError("TypeError", "Chaining cycle detected for promise"))
		return
	}
	if q, ok := v.(*Promise); ok {
		w.enqueue(func() {
			resolve, reject := w.resolvers(p)
			w.react(q, resolve, reject)
		})
		return
	}
	if isObject(v) {
		if then, ok := w.get(v, "then").(*Function); ok {
			w.enqueue(func() {
				resolve, reject := w.resolvers(p)
				rf, jf := w.resolverFunctions(resolve, reject)
				if _, err := w.call(then, v, []Value{rf, jf}); err != nil {
					reject(asException(err).Value)
				}
			})
			return
		}
	}
	w.settle(p, fulfilled, v)
}

func (w *world) resolverFunctions(resolve, reject func(Value)) (*Function, *Function) {
	rf := native("resolve", func(_ Value, args []Value) (Value, error) {
		resolve(arg(args, 0))
		return Undefined, nil
	})
	jf := native("reject", func(_ Value, args []Value) (Value, error) {
		reject(arg(args, 0))
		return Undefined, nil
	})
	return rf, jf
}

// react calls onFulfilled or onRejected, as a microtask, once p settles.
func (w *world) react(p *Promise, onFulfilled, onRejected func(Value)) {
	p.handled = true
	r := func() {
		if p.state == fulfilled {
			onFulfilled(p.value)
		} else {
			onRejected(p.value)
		}
	}
	if p.state == pending {
		p.reactions = append(p.reactions, r)
		return
	}
	w.enqueue(r)
}

// then is Promise.prototype.then with JavaScript handlers.
func (w *world) then(p *Promise, onF, onR Value) *Promise {
	q := &Promise{}
	handler := func(h Value, st promiseState) func(Value) {
		return func(v Value) {
			if _, ok := h.(*Function); !ok {
				w.settle(q, st, v)
				if st == fulfilled {
					return
				}
				return
			}
			res, err := w.call(h, Undefined, []Value{v})
			if err != nil {
				w.settle(q, rejected, asException(err).Value)
				return
			}
			w.resolveWith(q, res)
		}
	}
	w.react(p, handler(onF, fulfilled), handler(onR, rejected))
	return q
}

// promiseResolve is Promise.resolve.
func (w *world) promiseResolve(v Value) *Promise {
	if p, ok := v.(*Promise); ok {
		return p
	}
	p := &Promise{}
	w.resolveWith(p, v)
	return p
}

func (w *world) initPromise() {
	w.ctorPromise = &Function{Name: "Promise", instance: func(v Value) bool { _, ok := v.(*Promise); return ok }}
	w.ctorPromise.call = func(Value, []Value) (Value, error) {
		return nil, throwf("TypeError", "Promise constructor cannot be invoked without 'new'")
	}
	w.ctorPromise.construct = func(args []Value) (Value, error) {
		exec, ok := arg(args, 0).(*Function)
		if !ok {
			return nil, throwf("TypeError", "Promise resolver %s is not a function", typeOf(arg(args, 0)))
		}
		p := &Promise{}
		resolve, reject := w.resolvers(p)
		rf, jf := w.resolverFunctions(resolve, reject)
		if _, err := w.call(exec, Undefined, []Value{rf, jf}); err != nil {
			reject(asException(err).Value)
		}
		return p, nil
	}
	w.ctorPromise.Set("resolve", native("resolve", func(_ Value, args []Value) (Value, error) {
		return w.promiseResolve(arg(args, 0)), nil
	}))
	w.ctorPromise.Set("reject", native("reject", func(_ Value, args []Value) (Value, error) {
		p := &Promise{}
		w.settle(p, rejected, arg(args, 0))
		return p, nil
	}))
	w.ctorPromise.Set("all", native("all", func(_ Value, args []Value) (Value, error) {
		list, ok := arg(args, 0).(*Array)
		if !ok {
			return nil, throwf("TypeError", "Promise.all expects an array")
		}
		p := &Promise{}
		out := &Array{Elems: make([]Value, len(list.Elems))}
		left := len(list.Elems)
		if left == 0 {
			w.settle(p, fulfilled, out)
			return p, nil
		}
		for i, e := range list.Elems {
			i := i
			w.react(w.promiseResolve(e), func(v Value) {
				out.Elems[i] = v
				if left--; left == 0 {
					w.settle(p, fulfilled, out)
				}
			}, func(v Value) { w.settle(p, rejected, v) })
		}
		return p, nil
	}))
	w.protoPromise = map[string]*Function{
		"then": native("then", func(this Value, args []Value) (Value, error) {
			p, ok := this.(*Promise)
			if !ok {
				return nil, throwf("TypeError", "then called on a non-promise")
			}
			return w.then(p, arg(args, 0), arg(args, 1)), nil
		}),
		"catch": native("catch", func(this Value, args []Value) (Value, error) {
			p, ok := this.(*Promise)
			if !ok {
				return nil, throwf("TypeError", "catch called on a non-promise")
			}
			return w.then(p, Undefined, arg(args, 0)), nil
		}),
		"finally": native("finally", func(this Value, args []Value) (Value, error) {
			p, ok := this.(*Promise)
			if !ok {
				return nil, throwf("TypeError", "finally called on a non-promise")
			}
			f := arg(args, 0)
			q := &Promise{}
			after := func(st promiseState) func(Value) {
				return func(v Value) {
					if _, ok := f.(*Function); ok {
						if _, err := w.call(f, Undefined, nil); err != nil {
							w.settle(q, rejected, asException(err).Value)
							return
						}
					}
					w.settle(q, st, v)
				}
			}
			w.react(p, after(fulfilled), after(rejected))
			return q, nil
		}),
	}
	w.global.Set("Promise", w.ctorPromise)
}
