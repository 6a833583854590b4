//! The safe crate on the CPU backend: statuses and errors, handle and plan lifecycles, every check the
//! crate adds before calling the library, and the numerics through it (quantize / dequantize round
//! trips within the MXFP8 bound, GEMM and attention against float64 references). Inputs are random
//! per run (seed from /dev/urandom unless MXQ_TEST_SEED is set; every failure message prints it);
//! outputs are poisoned before each run and every element is checked.
// `!(err <= bound)` on purpose throughout: a NaN must count as a failure.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use std::sync::{Arc, Mutex};

use mxq::{
    sys, ArgSlot, Args, AttentionMask, AttentionPlan, Bf16, Category, DataType, DequantizePlan, Direction,
    GemmGrouping, GroupedGemmPlan, Grouping, Handle, LogLevel, QuantizePlan, ScaleLayout, Status,
};

// ---- random inputs ----------------------------------------------------------------------------------

fn seed() -> u64 {
    static SEED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *SEED.get_or_init(|| {
        if let Ok(s) = std::env::var("MXQ_TEST_SEED") {
            return s.parse().expect("MXQ_TEST_SEED must be an integer");
        }
        let mut b = [0u8; 8];
        use std::io::Read;
        std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b)).expect("/dev/urandom");
        u64::from_le_bytes(b)
    })
}

struct Rng(u64);

impl Rng {
    fn new(salt: u64) -> Rng {
        Rng(seed() ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }
    fn next(&mut self) -> u64 {
        // SplitMix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo) as u64) as i64
    }
    fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f32 {
        let (u, v) = (self.uniform().max(1e-300), self.uniform());
        ((-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()) as f32
    }
    /// Values whose magnitudes vary by 2^[-spread, spread) per element (never all zero).
    fn wide(&mut self, n: usize, spread: i64) -> Vec<f32> {
        (0..n).map(|_| self.normal() * (2.0f32).powi(self.range(-spread, spread) as i32)).collect()
    }
}

const POISON: u8 = 0xA5;

fn cpu() -> Handle {
    Handle::cpu().expect("CPU handle")
}

// ---- helpers ------------------------------------------------------------------------------------------

struct Quantized {
    data: Vec<u8>,
    scales: Vec<u8>,
}

/// Quantize fp32 [rows, cols] (LINEAR scales unless told) in one direction through the safe API.
fn quantize(
    h: &Handle,
    x: &[f32],
    rows: i64,
    cols: i64,
    dir: Direction,
    layout: ScaleLayout,
    groups: Option<&[i32]>,
) -> Quantized {
    let mut b =
        QuantizePlan::builder(h).input_dtype(DataType::Fp32).rows(rows).cols(cols).direction(dir).scale_layout(layout);
    if let Some(g) = groups {
        b = b.grouping(Grouping::Rows).num_groups(g.len() as i64);
    }
    let plan = b.build().unwrap();
    let (ds, ss) = if dir == Direction::Rowwise {
        (ArgSlot::RowwiseData, ArgSlot::RowwiseScales)
    } else {
        (ArgSlot::ColwiseData, ArgSlot::ColwiseScales)
    };
    let mut data = vec![POISON; plan.output_size(ds).unwrap()];
    let mut scales = vec![POISON; plan.output_size(ss).unwrap()];
    let mut args = Args::new().input(ArgSlot::X, x).output(ds, &mut data).output(ss, &mut scales);
    if let Some(g) = groups {
        args = args.input(ArgSlot::GroupOffsets, g);
    }
    plan.execute(&args).unwrap();
    Quantized { data, scales }
}

fn dequantize(
    h: &Handle,
    q: &Quantized,
    rows: i64,
    cols: i64,
    dir: Direction,
    layout: ScaleLayout,
    groups: Option<&[i32]>,
) -> Vec<f32> {
    let mut b = DequantizePlan::builder(h)
        .output_dtype(DataType::Fp32)
        .rows(rows)
        .cols(cols)
        .direction(dir)
        .scale_layout(layout);
    if let Some(g) = groups {
        b = b.grouping(Grouping::Rows).num_groups(g.len() as i64);
    }
    let plan = b.build().unwrap();
    let mut y = vec![f32::NAN; (rows * cols) as usize];
    let (ds, ss) = if dir == Direction::Rowwise {
        (ArgSlot::RowwiseData, ArgSlot::RowwiseScales)
    } else {
        (ArgSlot::ColwiseData, ArgSlot::ColwiseScales)
    };
    let mut args = Args::new().input(ds, &q.data).input(ss, &q.scales).output(ArgSlot::X, &mut y);
    if let Some(g) = groups {
        args = args.input(ArgSlot::GroupOffsets, g);
    }
    plan.execute(&args).unwrap();
    y
}

/// |x - dq(q(x))| <= amax(block) / 16 for E4M3 with RCEIL scales, blocks of 32 along rows of `x`
/// ([rows, cols]), restarting at each entry of `starts` (group starts) when given.
fn assert_round_trip(x: &[f32], y: &[f32], rows: usize, cols: usize, what: &str) {
    let mut bad = 0;
    for r in 0..rows {
        for b0 in (0..cols).step_by(32) {
            let blk = &x[r * cols + b0..r * cols + (b0 + 32).min(cols)];
            let amax = blk.iter().fold(0f32, |m, v| m.max(v.abs()));
            for (i, v) in blk.iter().enumerate() {
                if !((v - y[r * cols + b0 + i]).abs() <= amax / 16.0) {
                    bad += 1;
                }
            }
        }
    }
    assert_eq!(bad, 0, "{what}: {bad} of {} elements outside the MXFP8 bound (seed {})", rows * cols, seed());
}

fn transpose(x: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    (0..cols * rows).map(|i| x[(i % rows) * cols + i / rows]).collect()
}

// ---- statuses, handles, builders ----------------------------------------------------------------------

#[test]
fn version_and_statuses() {
    assert_eq!(mxq::version(), (sys::MXQ_VERSION_MAJOR, sys::MXQ_VERSION_MINOR, sys::MXQ_VERSION_PATCH));
    assert!(mxq::build_info().contains("mxq"));
    assert_eq!(Status::BAD_PARAM_SHAPE.name(), "MXQ_STATUS_BAD_PARAM_SHAPE");
    assert!(!Status::CUDA_ERROR.description().is_empty());
    let newer = Status(1999);
    assert_eq!((newer.name(), newer.category()), ("MXQ_STATUS_UNKNOWN", Category::BadParam));
    assert_eq!(Status(77).category(), Category::Unknown);
    assert_eq!(Status::SUCCESS.category(), Category::Success);
    assert_eq!(mxq::swizzled_scale_bytes(2, 129, 5), Some(2 * 256 * 8));
    assert_eq!(mxq::swizzled_scale_bytes(1, 0, 5), None);
}

#[test]
fn handles() {
    let h = cpu();
    assert_eq!((h.backend(), h.device(), h.compute_capability()), (mxq::Backend::Cpu, -1, 0));
    let e = Handle::new(mxq::Backend::Cpu, 3).unwrap_err();
    assert_eq!(e.status(), Status::BAD_PARAM_INVALID_VALUE);
    assert!(!e.message().is_empty());
    match Handle::cuda(None) {
        Ok(g) => assert!(g.compute_capability() > 0),
        Err(e) => {
            assert!(matches!(e.category(), Category::Cuda | Category::NotSupported), "{e}");
            assert!(!e.message().is_empty());
        }
    }
    // A handle moves to another thread (Send) and works there.
    std::thread::spawn(move || QuantizePlan::builder(&h).rows(32).cols(32).build().map(|_| ()))
        .join()
        .unwrap()
        .unwrap();
}

#[test]
fn builder_errors_carry_status_and_message() {
    let h = cpu();
    let e = QuantizePlan::builder(&h).rows(-5).cols(8).build().err().unwrap();
    assert_eq!(e.status(), Status::BAD_PARAM_SHAPE, "{e}");
    assert!(e.message().contains("ROWS"), "{e}");
    assert!(e.to_string().starts_with("MXQ_STATUS_BAD_PARAM_SHAPE (1005): "), "{e}");
    let e = QuantizePlan::builder(&h).set_attribute(sys::MXQ_QUANTIZE_ATTR_ROWS, 4i32).build().err().unwrap();
    assert_eq!(e.status(), Status::BAD_PARAM_ATTRIBUTE_SIZE);
    let e = QuantizePlan::builder(&h).set_attribute(999, 1i32).build().err().unwrap();
    assert_eq!(e.status(), Status::BAD_PARAM_UNKNOWN_ATTRIBUTE);
    // The first failure is the one reported, later setters are skipped.
    let e = QuantizePlan::builder(&h).set_attribute(999, 1i32).rows(-1).build().err().unwrap();
    assert_eq!(e.status(), Status::BAD_PARAM_UNKNOWN_ATTRIBUTE);
    let e = GroupedGemmPlan::builder(&h).m(8).n(8).build().err().unwrap(); // K missing
    assert_eq!(e.category(), Category::BadParam, "{e}");
}

#[test]
fn effective_attributes() {
    let h = cpu();
    let q = QuantizePlan::builder(&h).rows(100).cols(70).build().unwrap();
    assert_eq!(q.batch().unwrap(), 1);
    assert_eq!(q.input_dtype().unwrap(), DataType::Bf16);
    assert_eq!(q.scale_layout().unwrap(), ScaleLayout::Swizzled128x4);
    assert_eq!(q.output_size(ArgSlot::RowwiseData).unwrap(), 7000);
    assert_eq!(q.output_size(ArgSlot::ColwiseData).unwrap(), 0);
    assert_eq!(q.workspace_size().unwrap(), 0);
    let a = AttentionPlan::builder(&h)
        .batch(1)
        .heads_q(4)
        .heads_kv(2)
        .seqlen_q(64)
        .seqlen_kv(64)
        .head_dim(64)
        .p_scale(128.0)
        .build()
        .unwrap();
    assert_eq!(a.softmax_scale().unwrap(), 0.125);
    assert_eq!(a.p_scale().unwrap(), 128.0);
    assert_eq!(a.heads_kv().unwrap(), 2);
}

// ---- numerics -----------------------------------------------------------------------------------------

#[test]
fn quantize_dequantize_round_trip() {
    let h = cpu();
    let mut r = Rng::new(1);
    let (rows, cols) = (r.range(1, 200), r.range(1, 200));
    let (ru, cu) = (rows as usize, cols as usize);
    let x = r.wide(ru * cu, 10);
    for layout in [ScaleLayout::Linear, ScaleLayout::Swizzled128x4] {
        let q = quantize(&h, &x, rows, cols, Direction::Rowwise, layout, None);
        let y = dequantize(&h, &q, rows, cols, Direction::Rowwise, layout, None);
        assert_round_trip(&x, &y, ru, cu, &format!("rowwise {layout:?} {rows}x{cols}"));
        let q = quantize(&h, &x, rows, cols, Direction::Columnwise, layout, None);
        let y = dequantize(&h, &q, rows, cols, Direction::Columnwise, layout, None);
        assert_round_trip(
            &transpose(&x, ru, cu),
            &transpose(&y, ru, cu),
            cu,
            ru,
            &format!("columnwise {layout:?} {rows}x{cols}"),
        );
    }
    // The swizzled scales are the LINEAR ones rearranged (standalone swizzle, both ways).
    let lin = quantize(&h, &x, rows, cols, Direction::Rowwise, ScaleLayout::Linear, None);
    let swz = quantize(&h, &x, rows, cols, Direction::Rowwise, ScaleLayout::Swizzled128x4, None);
    assert_eq!(lin.data, swz.data);
    let sc = (cols + 31) / 32;
    let mut conv = vec![POISON; mxq::swizzled_scale_bytes(1, rows, sc).unwrap()];
    h.swizzle_scales(true, 1, rows, sc, sc, &lin.scales, &mut conv).unwrap();
    assert_eq!(conv, swz.scales, "seed {}", seed());
    let mut back = vec![POISON; lin.scales.len()];
    h.swizzle_scales(false, 1, rows, sc, sc, &swz.scales, &mut back).unwrap();
    assert_eq!(back, lin.scales, "seed {}", seed());
    let e = h.swizzle_scales(true, 1, rows, sc, sc, &lin.scales[1..], &mut conv).unwrap_err();
    assert_eq!(e.status(), Status::BAD_PARAM_SHAPE);
}

#[test]
fn bf16_input() {
    let h = cpu();
    let mut r = Rng::new(2);
    let (rows, cols) = (r.range(1, 100), r.range(1, 100));
    let x: Vec<Bf16> = r.wide((rows * cols) as usize, 6).into_iter().map(Bf16::from_f32).collect();
    let plan = QuantizePlan::builder(&h).rows(rows).cols(cols).scale_layout(ScaleLayout::Linear).build().unwrap();
    let mut data = vec![POISON; plan.output_size(ArgSlot::RowwiseData).unwrap()];
    let mut scales = vec![POISON; plan.output_size(ArgSlot::RowwiseScales).unwrap()];
    plan.execute(
        &Args::new()
            .input(ArgSlot::X, &x)
            .output(ArgSlot::RowwiseData, &mut data)
            .output(ArgSlot::RowwiseScales, &mut scales),
    )
    .unwrap();
    let y = dequantize(&h, &Quantized { data, scales }, rows, cols, Direction::Rowwise, ScaleLayout::Linear, None);
    let xf: Vec<f32> = x.iter().map(|b| b.to_f32()).collect();
    assert_round_trip(&xf, &y, rows as usize, cols as usize, "bf16");
}

fn offsets(r: &mut Rng, total: i64, groups: usize) -> Vec<i32> {
    let mut cuts: Vec<i32> = (0..groups - 1).map(|_| r.range(0, total + 1) as i32).collect();
    cuts.sort_unstable();
    cuts.push(total as i32);
    cuts[1] = cuts[0]; // an empty group
    cuts
}

/// |D - A B^T| <= K * 2^-23 * |A| |B|^T per element (fp32 accumulation's worst case, with margin).
fn assert_gemm(d: &[f32], a: &[f32], b: &[f32], m: usize, n: usize, k: usize, what: &str) {
    let mut bad = 0;
    for i in 0..m {
        for j in 0..n {
            let (mut s, mut sa) = (0f64, 0f64);
            for t in 0..k {
                let p = a[i * k + t] as f64 * b[j * k + t] as f64;
                s += p;
                sa += p.abs();
            }
            if !((d[i * n + j] as f64 - s).abs() <= k as f64 * 2f64.powi(-23) * sa + 1e-30) {
                bad += 1;
            }
        }
    }
    assert_eq!(bad, 0, "{what}: {bad} of {} elements off (seed {})", m * n, seed());
}

#[test]
fn m_grouped_gemm() {
    let h = cpu();
    let mut r = Rng::new(3);
    let (groups, n, k) = (4usize, r.range(1, 64), r.range(1, 160));
    let m = r.range(1, 200);
    let offs = offsets(&mut r, m, groups);
    let a = r.wide((m * k) as usize, 4);
    let w = r.wide(groups * (n * k) as usize, 4);
    let layout = ScaleLayout::Swizzled128x4;
    let a8 = quantize(&h, &a, m, k, Direction::Rowwise, layout, Some(&offs));
    let wplan =
        QuantizePlan::builder(&h).input_dtype(DataType::Fp32).batch(groups as i64).rows(n).cols(k).build().unwrap();
    let mut w8 = Quantized {
        data: vec![POISON; wplan.output_size(ArgSlot::RowwiseData).unwrap()],
        scales: vec![POISON; wplan.output_size(ArgSlot::RowwiseScales).unwrap()],
    };
    wplan
        .execute(
            &Args::new()
                .input(ArgSlot::X, &w)
                .output(ArgSlot::RowwiseData, &mut w8.data)
                .output(ArgSlot::RowwiseScales, &mut w8.scales),
        )
        .unwrap();

    let plan = GroupedGemmPlan::builder(&h)
        .grouping(GemmGrouping::M)
        .m(m)
        .n(n)
        .k(k)
        .num_groups(groups as i64)
        .d_dtype(DataType::Fp32)
        .build()
        .unwrap();
    let mut d = vec![f32::NAN; (m * n) as usize];
    plan.execute(
        &Args::new()
            .input(ArgSlot::AData, &a8.data)
            .input(ArgSlot::AScales, &a8.scales)
            .input(ArgSlot::BData, &w8.data)
            .input(ArgSlot::BScales, &w8.scales)
            .input(ArgSlot::GroupOffsets, &offs)
            .output(ArgSlot::D, &mut d),
    )
    .unwrap();

    let ad = dequantize(&h, &a8, m, k, Direction::Rowwise, layout, Some(&offs));
    let dplan =
        DequantizePlan::builder(&h).output_dtype(DataType::Fp32).batch(groups as i64).rows(n).cols(k).build().unwrap();
    let mut wd = vec![f32::NAN; w.len()];
    dplan
        .execute(
            &Args::new()
                .input(ArgSlot::RowwiseData, &w8.data)
                .input(ArgSlot::RowwiseScales, &w8.scales)
                .output(ArgSlot::X, &mut wd),
        )
        .unwrap();
    let (nu, ku) = (n as usize, k as usize);
    let mut lo = 0usize;
    for (g, &hi) in offs.iter().enumerate() {
        let hi = hi as usize;
        assert_gemm(
            &d[lo * nu..hi * nu],
            &ad[lo * ku..hi * ku],
            &wd[g * nu * ku..(g + 1) * nu * ku],
            hi - lo,
            nu,
            ku,
            &format!("group {g}"),
        );
        lo = hi;
    }
}

#[test]
fn attention_forward() {
    let h = cpu();
    let mut r = Rng::new(4);
    let (b, hq, hkv, d) = (2usize, 4usize, 2usize, 64usize);
    let (sq, skv) = (r.range(1, 80) as usize, r.range(1, 80) as usize);
    let q: Vec<f32> = (0..b * hq * sq * d).map(|_| r.normal()).collect();
    let k: Vec<f32> = (0..b * hkv * skv * d).map(|_| r.normal()).collect();
    let v: Vec<f32> = (0..b * hkv * skv * d).map(|_| r.normal()).collect();
    let lay = ScaleLayout::Swizzled128x4;
    let q8 = quantize(&h, &q, (b * hq * sq) as i64, d as i64, Direction::Rowwise, lay, None);
    let k8 = quantize(&h, &k, (b * hkv * skv) as i64, d as i64, Direction::Rowwise, lay, None);
    // V along S: for each (b, h) the columnwise scales of the [S, D] matrix, data not transposed.
    let vplan = QuantizePlan::builder(&h)
        .input_dtype(DataType::Fp32)
        .batch((b * hkv) as i64)
        .rows(skv as i64)
        .cols(d as i64)
        .direction(Direction::Columnwise)
        .colwise_transposed(false)
        .build()
        .unwrap();
    let mut v8 = Quantized {
        data: vec![POISON; vplan.output_size(ArgSlot::ColwiseData).unwrap()],
        scales: vec![POISON; vplan.output_size(ArgSlot::ColwiseScales).unwrap()],
    };
    vplan
        .execute(
            &Args::new()
                .input(ArgSlot::X, &v)
                .output(ArgSlot::ColwiseData, &mut v8.data)
                .output(ArgSlot::ColwiseScales, &mut v8.scales),
        )
        .unwrap();
    let plan = AttentionPlan::builder(&h)
        .batch(b as i64)
        .heads_q(hq as i64)
        .heads_kv(hkv as i64)
        .seqlen_q(sq as i64)
        .seqlen_kv(skv as i64)
        .head_dim(d as i64)
        .mask(AttentionMask::CausalTopLeft)
        .build()
        .unwrap();
    let mut o = vec![Bf16(0xFFFF); b * hq * sq * d];
    let mut lse = vec![f32::NAN; b * hq * sq];
    plan.execute(
        &Args::new()
            .input(ArgSlot::QData, &q8.data)
            .input(ArgSlot::QScales, &q8.scales)
            .input(ArgSlot::KData, &k8.data)
            .input(ArgSlot::KScales, &k8.scales)
            .input(ArgSlot::VData, &v8.data)
            .input(ArgSlot::VScales, &v8.scales)
            .output(ArgSlot::O, &mut o)
            .output(ArgSlot::Lse, &mut lse),
    )
    .unwrap();

    // float64 reference on the dequantized operands with an unquantized P: quantizing P to E4M3 moves
    // each weight by at most 2^-4 of itself, so |O - ref| <= 2^-4 max|V| (+ bf16 rounding of O).
    let dq = |x: &Quantized, rows: usize| dequantize(&h, x, rows as i64, d as i64, Direction::Rowwise, lay, None);
    let (qd, kd) = (dq(&q8, b * hq * sq), dq(&k8, b * hkv * skv));
    let vdp = DequantizePlan::builder(&h)
        .output_dtype(DataType::Fp32)
        .batch((b * hkv) as i64)
        .rows(skv as i64)
        .cols(d as i64)
        .direction(Direction::Columnwise)
        .colwise_transposed(false)
        .build()
        .unwrap();
    let mut vd = vec![f32::NAN; v.len()];
    vdp.execute(
        &Args::new()
            .input(ArgSlot::ColwiseData, &v8.data)
            .input(ArgSlot::ColwiseScales, &v8.scales)
            .output(ArgSlot::X, &mut vd),
    )
    .unwrap();
    let vmax = vd.iter().fold(0f32, |m, x| m.max(x.abs())) as f64;
    let scale = 1.0 / (d as f64).sqrt();
    let (mut bad_o, mut bad_l) = (0, 0);
    for bi in 0..b {
        for hi in 0..hq {
            let kh = hi / (hq / hkv);
            for i in 0..sq {
                let qrow = &qd[((bi * hq + hi) * sq + i) * d..][..d];
                let s: Vec<f64> = (0..skv)
                    .map(|j| {
                        if j > i {
                            return f64::NEG_INFINITY;
                        }
                        let krow = &kd[((bi * hkv + kh) * skv + j) * d..][..d];
                        scale * qrow.iter().zip(krow).map(|(a, c)| *a as f64 * *c as f64).sum::<f64>()
                    })
                    .collect();
                let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let p: Vec<f64> = s.iter().map(|x| (x - m).exp()).collect();
                let l: f64 = p.iter().sum();
                let row = (bi * hq + hi) * sq + i;
                if !((lse[row] as f64 - (m + l.ln())).abs() <= 1e-4 * (m + l.ln()).abs().max(1.0)) {
                    bad_l += 1;
                }
                for c in 0..d {
                    let want: f64 =
                        (0..skv).map(|j| p[j] * vd[((bi * hkv + kh) * skv + j) * d + c] as f64).sum::<f64>() / l;
                    let got = o[row * d + c].to_f32() as f64;
                    if !((got - want).abs() <= 2f64.powi(-4) * vmax + 2f64.powi(-8) * want.abs()) {
                        bad_o += 1;
                    }
                }
            }
        }
    }
    assert_eq!((bad_o, bad_l), (0, 0), "O / LSE elements off (sq {sq}, skv {skv}, seed {})", seed());
}

// ---- execute checks -----------------------------------------------------------------------------------

#[test]
fn execute_checks() {
    let h = cpu();
    let plan = QuantizePlan::builder(&h)
        .input_dtype(DataType::Fp32)
        .rows(64)
        .cols(64)
        .scale_layout(ScaleLayout::Linear)
        .build()
        .unwrap();
    let x = vec![1.0f32; 64 * 64];
    let mut q = vec![POISON; 64 * 64];
    let mut s = vec![POISON; 128];

    let e = plan
        .execute(
            &Args::new()
                .input(ArgSlot::X, &x)
                .output(ArgSlot::RowwiseData, &mut q)
                .output(ArgSlot::RowwiseScales, &mut s[..127]),
        )
        .unwrap_err();
    assert_eq!(e.status(), Status::BAD_PARAM_SHAPE);
    assert!(e.message().contains("RowwiseScales") && e.message().contains("127"), "{e}");
    let e = plan
        .execute(
            &Args::new()
                .input(ArgSlot::X, &x[1..])
                .output(ArgSlot::RowwiseData, &mut q)
                .output(ArgSlot::RowwiseScales, &mut s),
        )
        .unwrap_err();
    assert_eq!(e.status(), Status::BAD_PARAM_SHAPE, "{e}");
    let e = plan
        .execute(
            &Args::new().input(ArgSlot::X, &x).input(ArgSlot::RowwiseData, &q).output(ArgSlot::RowwiseScales, &mut s),
        )
        .unwrap_err();
    assert_eq!(e.status(), Status::BAD_PARAM_ARGUMENT);
    assert!(e.message().contains("Args::output"), "{e}");
    let e = plan
        .execute(
            &Args::new()
                .input(ArgSlot::X, &x)
                .device(ArgSlot::RowwiseData, q.as_mut_ptr().cast())
                .output(ArgSlot::RowwiseScales, &mut s),
        )
        .unwrap_err();
    assert_eq!(e.status(), Status::BAD_PARAM_ARGUMENT);
    // The library's own checks come through with their status: a missing and a foreign slot.
    let e = plan.execute(&Args::new().input(ArgSlot::X, &x).output(ArgSlot::RowwiseData, &mut q)).unwrap_err();
    assert_eq!(e.status(), Status::BAD_PARAM_ARGUMENT, "{e}");
    let mut d = vec![0f32; 4];
    let e = plan
        .execute(
            &Args::new()
                .input(ArgSlot::X, &x)
                .output(ArgSlot::RowwiseData, &mut q)
                .output(ArgSlot::RowwiseScales, &mut s)
                .output(ArgSlot::D, &mut d),
        )
        .unwrap_err();
    assert_eq!(e.status(), Status::BAD_PARAM_ARGUMENT, "{e}");
    assert!(q.iter().chain(&s).all(|&b| b == POISON), "a failed execute wrote its outputs");

    plan.execute(
        &Args::new().input(ArgSlot::X, &x).output(ArgSlot::RowwiseData, &mut q).output(ArgSlot::RowwiseScales, &mut s),
    )
    .unwrap();
    // 1.0 in every block: RCEIL scale 2^(119-127), element 1.0 * 2^8 = 256 = E4M3 0x78.
    assert!(q.iter().all(|&b| b == 0x78) && s.iter().all(|&b| b == 119), "constant input quantized wrong");

    // Varlen attention: sizes live in cu_seqlens, so the safe path refuses rather than guesses.
    let a = AttentionPlan::builder(&h)
        .batch(2)
        .heads_q(2)
        .seqlen_q(64)
        .seqlen_kv(64)
        .head_dim(64)
        .layout(mxq::AttentionLayout::Bshd)
        .varlen(true)
        .build();
    if let Ok(a) = a {
        let mut o = vec![Bf16(0); 2 * 64 * 2 * 64];
        let e = a.execute(&Args::new().output(ArgSlot::O, &mut o)).unwrap_err();
        assert_eq!(e.status(), Status::NOT_SUPPORTED, "{e}");
    }
}

#[test]
fn log_callback() {
    let seen: Arc<Mutex<Vec<(LogLevel, String)>>> = Arc::default();
    let sink = seen.clone();
    mxq::log::set_level(LogLevel::Info).unwrap();
    assert_eq!(mxq::log::level().unwrap(), LogLevel::Info);
    mxq::log::set_callback(Some(move |l, m: &str| sink.lock().unwrap().push((l, m.to_owned())))).unwrap();
    let h = cpu();
    let _ = QuantizePlan::builder(&h).rows(64).cols(64).build().unwrap();
    let _ = QuantizePlan::builder(&h).rows(0).build();
    mxq::log::set_callback(None::<fn(LogLevel, &str)>).unwrap();
    mxq::log::set_level(LogLevel::Error).unwrap();
    let seen = seen.lock().unwrap();
    assert!(seen.iter().any(|(l, _)| *l == LogLevel::Info), "{seen:?}");
    assert!(seen.iter().any(|(l, m)| *l == LogLevel::Error && m.contains("ROWS")), "{seen:?}");
}
