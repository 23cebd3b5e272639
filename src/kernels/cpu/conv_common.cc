#include "kernels/cpu/conv_common.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "core/parallel.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/shared_packs.h"
#include "semantics/value_shape.h"

namespace ferry::cpu {

std::shared_ptr<const Tensor> ConstantInput(const ir::Node& node, size_t i) {
  const ir::Value* v = node.input(i);
  if (!v || !v->is_initializer()) return nullptr;
  if (const ir::Graph* g = v->owner()) {
    const auto& inputs = g->inputs();
    if (std::find(inputs.begin(), inputs.end(), v) != inputs.end()) return nullptr;
  }
  return v->initializer_ptr();
}

int64_t KnownRank(const ir::Node& node, size_t i) { return semantics::KnownRank(node.input(i)).value_or(-1); }

namespace {

// Per-thread, 64-byte-aligned buffers that only grow: blocked activations, reordered weights and scratchpads live
// here for the duration of one RunConvPlan on this thread. AddConvWorkspace reports what RunConvPlan asks of them.
enum ScratchSlot { kSrc, kWeights, kDst, kPad, kSlotCount };

struct Slots {
  void* p[kSlotCount] = {};
  size_t n[kSlotCount] = {};
  ~Slots() {
    for (void* q : p) ::operator delete (q, std::align_val_t{64});
  }
};
thread_local Slots t_slots;

void* Scratch(ScratchSlot slot, size_t bytes) {
  Slots& t = t_slots;
  if (bytes > t.n[slot]) {
    ::operator delete (t.p[slot], std::align_val_t{64});
    t.p[slot] = nullptr;
    t.n[slot] = 0;
    t.p[slot] = ::operator new (bytes, std::align_val_t{64});
    t.n[slot] = bytes;
  }
  return t.p[slot];
}

// A reorder from `from` to `to` with a user scratchpad, and that scratchpad's desc.
dnnl::reorder MakeReorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to, dnnl::memory::desc* scratch) {
  dnnl::reorder::primitive_desc pd(Engine(), from, Engine(), to, ScratchpadAttr());
  *scratch = pd.scratchpad_desc();
  return dnnl::reorder(pd);
}

void AddScratchpad(std::unordered_map<int, dnnl::memory>& args, const dnnl::memory::desc& md, void* buffer) {
  if (md.get_size() > 0) args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(md, Engine(), buffer));
}

}  // namespace

dnnl::memory PackedWeights::Get(const Tensor& w, const dnnl::memory::desc& user, const dnnl::memory::desc& md,
                                const std::string& what) {
  std::lock_guard lock(mu_);
  for (const Entry& e : entries_) {
    if (e.user == user && e.md == md) return *e.memory;
  }
  if (share_) {
    if (auto m = SharedPacks::Instance().Find(source_, user, md)) {
      entries_.push_back({user, md, m, false});
      return *m;
    }
  }
  // A part of w (a submemory desc) is read through a desc without offset at the part's address: oneDNN 2.6's
  // reorders into the Winograd domain ignore a source's offset.
  dnnl::memory::desc from_md = user;
  const char* base = static_cast<const char*>(w.raw_data());
  if (user.data.offset0 != 0) {
    const auto& blocking = user.data.format_desc.blocking;
    if (user.data.format_kind != dnnl_blocked || blocking.inner_nblks != 0) {
      throw InternalError(what + ": packing a part of weights that are not in a plain layout");
    }
    from_md = dnnl::memory::desc(user.dims(), user.data_type(),
                                 dnnl::memory::dims(blocking.strides, blocking.strides + user.data.ndims));
    base += user.data.offset0 * static_cast<int64_t>(dnnl::memory::data_type_size(user.data_type()));
  }
  dnnl::memory from(from_md, Engine(), const_cast<char*>(base));
  auto to = std::make_shared<const dnnl::memory>(md, Engine());
  WithStream(1, what, [&](dnnl::stream& s) {
    dnnl::memory dst = *to;
    dnnl::reorder(from, dst).execute(s, from, dst);
  });
  entries_.push_back({user, md, to, true});
  if (share_) SharedPacks::Instance().Add(source_, user, md, to);
  return *to;
}

int64_t PackedWeights::bytes() const {
  std::lock_guard lock(mu_);
  int64_t total = 0;
  for (const Entry& e : entries_) {
    if (e.made_here) total += static_cast<int64_t>(e.md.get_size());
  }
  return total;
}

dnnl::primitive_attr ScratchpadAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void FinishConvPlan(ConvPlan& plan, const dnnl::primitive_desc& pd, dnnl::primitive prim,
                    const Tensor* constant_weights, PackedWeights* packed, const std::string& what) {
  try {
    plan.prim = std::move(prim);
    plan.src_md = pd.src_desc(0);
    plan.weights_md = pd.weights_desc(0);
    if (plan.bias) plan.bias_md = pd.weights_desc(1);
    plan.dst_md = pd.dst_desc(0);
    plan.scratch_md = pd.scratchpad_desc();
    if (plan.src_md != plan.src_user) plan.src_in = MakeReorder(plan.src_user, plan.src_md, &plan.src_in_scratch);
    if (plan.dst_md != plan.dst_user) plan.dst_out = MakeReorder(plan.dst_md, plan.dst_user, &plan.dst_out_scratch);
    if (plan.sum && plan.dst_out) plan.z_in = MakeReorder(plan.dst_user, plan.dst_md, &plan.z_in_scratch);
    if (constant_weights && packed) {
      // Packed once per layout: the primitive's preferred weight layout.
      plan.packed_weights = packed->Get(*constant_weights, plan.weights_user, plan.weights_md, what);
    } else if (plan.weights_md != plan.weights_user) {
      plan.weights_in = MakeReorder(plan.weights_user, plan.weights_md, &plan.weights_in_scratch);
    }
  } catch (const dnnl::error& e) {
    throw InternalError(what + ": oneDNN: " + e.what());
  }
}

namespace {

// One scratchpad buffer serves every primitive of the plan: they run one after another on one stream.
size_t ScratchpadBytes(const ConvPlan& plan) {
  size_t bytes = std::max({plan.scratch_md.get_size(), plan.src_in_scratch.get_size(),
                           plan.weights_in_scratch.get_size(), plan.dst_out_scratch.get_size(),
                           plan.z_in_scratch.get_size()});
  for (const ConvPlan::Part& part : plan.parts) bytes = std::max(bytes, ScratchpadBytes(*part.plan));
  return bytes;
}

}  // namespace

void* ConvScratchpad(size_t bytes) { return Scratch(kPad, bytes); }

int64_t ConvScratchBytesOnThisThread() {
  int64_t total = 0;
  for (size_t n : t_slots.n) total += static_cast<int64_t>(n);
  return total;
}

void AddConvWorkspace(const ConvPlan& plan, Workspace& ws) {
  for (const ConvPlan::Part& part : plan.parts) AddConvWorkspace(*part.plan, ws);
  // What RunConvPlan asks Scratch() for, slot by slot; the slots live on the thread that calls it (the primitives'
  // OpenMP threads work in them but hold none of their own).
  if (plan.src_in) ws.Need("conv src reorder", static_cast<int64_t>(plan.src_md.get_size()));
  if (!plan.packed_weights && plan.weights_in) {
    ws.Need("conv weights reorder", static_cast<int64_t>(plan.weights_md.get_size()));
  }
  if (plan.dst_out) ws.Need("conv dst reorder", static_cast<int64_t>(plan.dst_md.get_size()));
  ws.Need("conv scratchpad", static_cast<int64_t>(ScratchpadBytes(plan)));
}

void RunConvPlan(const ConvPlan& plan, const void* x, const void* w, const void* bias, void* y, int threads,
                 const std::string& what, const void* z) {
  if (plan.sum != (z != nullptr)) throw InternalError(what + ": the convolution plan and its Z input disagree");
  if (!plan.parts.empty()) {
    for (const ConvPlan::Part& part : plan.parts) {
      const float* b = bias ? static_cast<const float*>(bias) + part.first_channel : nullptr;
      const float* zp = z ? static_cast<const float*>(z) + part.y_offset : nullptr;
      RunConvPlan(*part.plan, x, w, b, static_cast<float*>(y) + part.y_offset, threads, what, zp);
    }
    return;
  }
  const dnnl::engine& eng = Engine();
  const size_t pad_bytes = ScratchpadBytes(plan);
  void* pad = pad_bytes > 0 ? Scratch(kPad, pad_bytes) : nullptr;
  WithStream(threads, what, [&](dnnl::stream& s) {
    dnnl::memory src(plan.src_user, eng, const_cast<void*>(x));
    if (plan.src_in) {
      dnnl::memory blocked(plan.src_md, eng, Scratch(kSrc, plan.src_md.get_size()));
      std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, blocked}};
      AddScratchpad(args, plan.src_in_scratch, pad);
      plan.src_in->execute(s, args);
      src = blocked;
    }
    dnnl::memory weights;
    if (plan.packed_weights) {
      weights = *plan.packed_weights;
    } else {
      weights = dnnl::memory(plan.weights_user, eng, const_cast<void*>(w));
      if (plan.weights_in) {
        dnnl::memory packed(plan.weights_md, eng, Scratch(kWeights, plan.weights_md.get_size()));
        std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_FROM, weights}, {DNNL_ARG_TO, packed}};
        AddScratchpad(args, plan.weights_in_scratch, pad);
        plan.weights_in->execute(s, args);
        weights = packed;
      }
    }
    dnnl::memory dst_user(plan.dst_user, eng, y);
    dnnl::memory dst = plan.dst_out ? dnnl::memory(plan.dst_md, eng, Scratch(kDst, plan.dst_md.get_size())) : dst_user;
    if (z && plan.z_in) {  // the sum post-op adds what dst holds: Z, in dst's layout
      dnnl::memory zm(plan.dst_user, eng, const_cast<void*>(z));
      std::unordered_map<int, dnnl::memory> zargs{{DNNL_ARG_FROM, zm}, {DNNL_ARG_TO, dst}};
      AddScratchpad(zargs, plan.z_in_scratch, pad);
      plan.z_in->execute(s, zargs);
    } else if (z && z != y) {  // Z into Y, in 256 KiB chunks over the threads
      const int64_t bytes = static_cast<int64_t>(plan.dst_user.get_size());
      ParallelFor(threads, bytes, int64_t{1} << 18, [&](int64_t begin, int64_t end) {
        std::memcpy(static_cast<char*>(y) + begin, static_cast<const char*>(z) + begin,
                    static_cast<size_t>(end - begin));
      });
    }
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
    if (plan.bias) args.emplace(DNNL_ARG_BIAS, dnnl::memory(plan.bias_md, eng, const_cast<void*>(bias)));
    AddScratchpad(args, plan.scratch_md, pad);
    plan.prim.execute(s, args);
    if (plan.dst_out) {
      std::unordered_map<int, dnnl::memory> out{{DNNL_ARG_FROM, dst}, {DNNL_ARG_TO, dst_user}};
      AddScratchpad(out, plan.dst_out_scratch, pad);
      plan.dst_out->execute(s, out);
    }
  });
}

}  // namespace ferry::cpu
