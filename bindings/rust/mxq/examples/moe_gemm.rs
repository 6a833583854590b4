//! Quantize -> M-grouped GEMM -> check, on the CPU backend: the fprop of a Mixture-of-Experts layer
//! (tokens of expert g in rows [o_{g-1}, o_g) times that expert's weights). docs/quickstart-rust.md
//! walks through it. Run: MXQ_LIB_DIR=/path/to/build cargo run --example moe_gemm
use mxq::{ArgSlot, Args, DataType, GemmGrouping, GroupedGemmPlan, Grouping, Handle, QuantizePlan};

fn main() -> Result<(), mxq::Error> {
    let (experts, tokens, n, k) = (4usize, 300usize, 128usize, 256usize);
    let offsets: Vec<i32> = vec![70, 70, 210, 300]; // expert 1 gets no token
    let x: Vec<f32> = (0..tokens * k).map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0).collect();
    let w: Vec<f32> = (0..experts * n * k).map(|i| ((i * 104729) % 1000) as f32 / 500.0 - 1.0).collect();

    let h = Handle::cpu()?;

    // Activations: rowwise, grouped by expert (each group's scale rows padded on its own).
    let qa = QuantizePlan::builder(&h)
        .input_dtype(DataType::Fp32)
        .rows(tokens as i64)
        .cols(k as i64)
        .grouping(Grouping::Rows)
        .num_groups(experts as i64)
        .build()?;
    let mut a = vec![0u8; qa.output_size(ArgSlot::RowwiseData)?];
    let mut a_s = vec![0u8; qa.output_size(ArgSlot::RowwiseScales)?];
    qa.execute(
        &Args::new()
            .input(ArgSlot::X, &x)
            .input(ArgSlot::GroupOffsets, &offsets)
            .output(ArgSlot::RowwiseData, &mut a)
            .output(ArgSlot::RowwiseScales, &mut a_s),
    )?;

    // Weights: one [N, K] matrix per expert, a batch of `experts`.
    let qw = QuantizePlan::builder(&h)
        .input_dtype(DataType::Fp32)
        .batch(experts as i64)
        .rows(n as i64)
        .cols(k as i64)
        .build()?;
    let mut b = vec![0u8; qw.output_size(ArgSlot::RowwiseData)?];
    let mut b_s = vec![0u8; qw.output_size(ArgSlot::RowwiseScales)?];
    qw.execute(
        &Args::new()
            .input(ArgSlot::X, &w)
            .output(ArgSlot::RowwiseData, &mut b)
            .output(ArgSlot::RowwiseScales, &mut b_s),
    )?;

    // D[rows of g] = A[rows of g] * W[g]^T, in fp32.
    let gemm = GroupedGemmPlan::builder(&h)
        .grouping(GemmGrouping::M)
        .m(tokens as i64)
        .n(n as i64)
        .k(k as i64)
        .num_groups(experts as i64)
        .d_dtype(DataType::Fp32)
        .build()?;
    let mut d = vec![0f32; tokens * n];
    gemm.execute(
        &Args::new()
            .input(ArgSlot::AData, &a)
            .input(ArgSlot::AScales, &a_s)
            .input(ArgSlot::BData, &b)
            .input(ArgSlot::BScales, &b_s)
            .input(ArgSlot::GroupOffsets, &offsets)
            .output(ArgSlot::D, &mut d),
    )?;

    // Against the unquantized product: MXFP8 keeps the relative error near 2^-4 per operand.
    let (mut err, mut norm) = (0f64, 0f64);
    let mut lo = 0;
    for (g, &hi) in offsets.iter().enumerate() {
        for t in lo..hi as usize {
            for j in 0..n {
                let exact: f64 = (0..k).map(|i| x[t * k + i] as f64 * w[(g * n + j) * k + i] as f64).sum();
                err += (d[t * n + j] as f64 - exact).powi(2);
                norm += exact * exact;
            }
        }
        lo = hi as usize;
    }
    let rel = (err / norm).sqrt();
    println!("MoE fprop, {experts} experts, {tokens} tokens: relative error vs fp64 {rel:.2e}");
    assert!(rel < 0.05, "relative error {rel}");
    Ok(())
}
