# Smoke test of the generated ccall layer on the CPU backend: handle lifecycle, one error path with
# its status and message, and a quantize -> dequantize round trip checked element by element
# against the MXFP8 error bound (|x - dq(q(x))| <= amax(block) / 16 for E4M3 with RCEIL scales).
# Runs where Julia is installed (bindings/julia/test.sh); needs MXQ_LIBRARY or libmxq on the path.
using Test
using Random

include(joinpath(@__DIR__, "..", "src", "MXQ.jl"))
using .MXQ

setattr(f, plan, attr, v) = check(f(plan, attr, Ref(v), sizeof(v)))

@testset "MXQ" begin
    @test MXQ.version() >= v"0.1.0"
    @test unsafe_string(mxqGetStatusName(MXQ_STATUS_BAD_PARAM_SHAPE)) == "MXQ_STATUS_BAD_PARAM_SHAPE"

    handle = Ref{mxqHandle_t}(C_NULL)
    check(mxqCreateWithBackend(handle, MXQ_BACKEND_CPU, 0))
    h = handle[]
    backend = Ref{mxqBackend_t}(-1)
    check(mxqGetBackend(h, backend))
    @test backend[] == MXQ_BACKEND_CPU

    qp = Ref{mxqQuantizePlan_t}(C_NULL)
    check(mxqQuantizePlanCreate(h, qp))
    # An int64 attribute given 4 bytes: the status and a non-empty message come back.
    st = mxqQuantizePlanSetAttribute(qp[], MXQ_QUANTIZE_ATTR_ROWS, Ref(Int32(4)), 4)
    @test st == MXQ_STATUS_BAD_PARAM_ATTRIBUTE_SIZE
    err = try check(st); nothing catch e; e end
    @test err isa MXQError && err.status == st && !isempty(err.message)

    seed = rand(RandomDevice(), UInt32)
    rng = MersenneTwister(seed)
    rows, cols = 5, 70  # a partial last block
    x = Float32.(randn(rng, cols, rows) .* exp2.(rand(rng, -8:8, cols, rows)))  # column-major: x[:, r] is row r
    for (a, v) in ((MXQ_QUANTIZE_ATTR_INPUT_DTYPE, Int32(MXQ_DTYPE_FP32)),
                   (MXQ_QUANTIZE_ATTR_SCALE_LAYOUT, Int32(MXQ_SCALE_LAYOUT_LINEAR)),
                   (MXQ_QUANTIZE_ATTR_ROWS, Int64(rows)), (MXQ_QUANTIZE_ATTR_COLS, Int64(cols)))
        setattr(mxqQuantizePlanSetAttribute, qp[], a, v)
    end
    check(mxqQuantizePlanFinalize(qp[]))
    nbytes = Ref{Csize_t}(0)
    check(mxqQuantizePlanGetOutputSize(qp[], MXQ_ARG_ROWWISE_DATA, nbytes))
    q = fill(0xAA, nbytes[])
    check(mxqQuantizePlanGetOutputSize(qp[], MXQ_ARG_ROWWISE_SCALES, nbytes))
    s = fill(0xAA, nbytes[])
    ws = Ref{Csize_t}(0)
    check(mxqQuantizePlanGetWorkspaceSize(qp[], ws))
    @test ws[] == 0
    GC.@preserve x q s begin
        args = [mxqExecArg_t(MXQ_ARG_X, 0, pointer(x)), mxqExecArg_t(MXQ_ARG_ROWWISE_DATA, 0, pointer(q)),
                mxqExecArg_t(MXQ_ARG_ROWWISE_SCALES, 0, pointer(s))]
        check(mxqQuantizeExecute(h, qp[], args, length(args), C_NULL, 0, C_NULL))
    end

    dp = Ref{mxqDequantizePlan_t}(C_NULL)
    check(mxqDequantizePlanCreate(h, dp))
    for (a, v) in ((MXQ_DEQUANTIZE_ATTR_OUTPUT_DTYPE, Int32(MXQ_DTYPE_FP32)),
                   (MXQ_DEQUANTIZE_ATTR_SCALE_LAYOUT, Int32(MXQ_SCALE_LAYOUT_LINEAR)),
                   (MXQ_DEQUANTIZE_ATTR_ROWS, Int64(rows)), (MXQ_DEQUANTIZE_ATTR_COLS, Int64(cols)))
        setattr(mxqDequantizePlanSetAttribute, dp[], a, v)
    end
    check(mxqDequantizePlanFinalize(dp[]))
    y = fill(NaN32, cols, rows)
    GC.@preserve y q s begin
        args = [mxqExecArg_t(MXQ_ARG_ROWWISE_DATA, 0, pointer(q)), mxqExecArg_t(MXQ_ARG_ROWWISE_SCALES, 0, pointer(s)),
                mxqExecArg_t(MXQ_ARG_X, 0, pointer(y))]
        check(mxqDequantizeExecute(h, dp[], args, length(args), C_NULL, 0, C_NULL))
    end
    bad = 0
    for r in 1:rows, c in 1:cols
        b0 = 32 * ((c - 1) ÷ 32) + 1
        amax = maximum(abs, x[b0:min(b0 + 31, cols), r])
        bad += !(abs(x[c, r] - y[c, r]) <= amax / 16)
    end
    bad == 0 || println("round trip failed for $bad of $(rows * cols) elements (seed $seed)")
    @test bad == 0

    check(mxqDequantizePlanDestroy(dp[]))
    check(mxqQuantizePlanDestroy(qp[]))
    check(mxqDestroy(h))
    @test mxqDestroy(C_NULL) == MXQ_STATUS_SUCCESS
end
