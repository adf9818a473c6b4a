// tb_mesh: runs a GEMM D = A x B + C tile by tile on mesh4x4 and compares every element of D
// with the model's golden image, bit for bit.
//
// Inputs (plusargs): +M=<rows> +N=<cols> +K=<depth> +DIR=<folder with a.hex b.hex c.hex d.hex>
// as written by `tcrtl gemm --memh DIR` (FP16 A and B, FP32 C and D, row-major; the `//`
// header lines are skipped by $readmemh). Optional +SHOW=<n>: how many mismatches to print
// (default 8). Optional +OUT=<folder>: also write the design's D there as d.hex
// ($writememh), for `tcrtl grade --golden DIR --student OUT`. With +OUT, +STEPS also writes
// OUT/steps.hex: every PE's accumulator after each step of its element (one line per row,
// column, step of D, the order of the golden steps.hex), sampled +LAT=<n> clock edges after
// the edge at which the PE takes the step's operands (default 1: the reference PE's second
// stage; 0 for a single-cycle MAC). Output: one MISMATCH line per shown mismatch, then the summary line
//   RESULT <passed> passed, <failed> failed
// Tiles are 4 x 4 blocks of D; rows and columns past M or N are fed zeros and not compared.
`timescale 1ns/1ps
`default_nettype none

module tb_mesh;
    localparam MAXW = 1 << 16;   // words per image

    reg [15:0] amem [0:MAXW-1];
    reg [15:0] bmem [0:MAXW-1];
    reg [31:0] cmem [0:MAXW-1];
    reg [31:0] dmem [0:MAXW-1];
    reg [31:0] dout [0:MAXW-1];   // the design's D, for +OUT
    localparam MAXS = 1 << 18;    // step records
    reg [31:0] smem [0:MAXS-1];   // the accumulator after each step, for +STEPS

    reg          clk = 1'b0;
    reg          rst = 1'b1;
    reg          vld = 1'b0;
    reg          load = 1'b0;
    reg  [63:0]  a_col = 64'd0;
    reg  [63:0]  b_row = 64'd0;
    reg  [511:0] c_flat = 512'd0;
    wire [511:0] acc_flat;

    mesh4x4 dut (
        .clk(clk), .rst(rst), .vld(vld), .a_col(a_col), .b_row(b_row),
        .load(load), .c_flat(c_flat), .acc_flat(acc_flat)
    );

    always #5 clk = ~clk;

    integer m, n, k, show, lat;
    integer cyc = 0;              // clock edges so far
    integer t0 = -1000;           // the edge that takes step 0 of the current tile into PE (0, 0)
    integer cur_ti = 0, cur_tj = 0;
    integer si, sj, ss;
    reg steps_on = 1'b0;

    always @(posedge clk) cyc <= cyc + 1;

    // Step sampling: PE (i, j) takes step s at edge t0 + s + i + j; its accumulator shows the
    // step lat edges later.
    always @(negedge clk) begin
        if (steps_on) begin
            for (si = 0; si < 4; si = si + 1)
                for (sj = 0; sj < 4; sj = sj + 1) begin
                    ss = cyc - t0 - si - sj - lat;
                    if (ss >= 0 && ss < k && cur_ti + si < m && cur_tj + sj < n)
                        smem[((cur_ti + si) * n + cur_tj + sj) * k + ss] =
                            acc_flat[32 * (4 * si + sj) +: 32];
                end
        end
    end

    integer ti, tj, i, j, t, r, c;
    integer passed, failed;
    reg [1023:0] dir, out, vcd_file;
    reg [31:0] got, want;

    initial begin
        if (!$value$plusargs("M=%d", m) || !$value$plusargs("N=%d", n) ||
            !$value$plusargs("K=%d", k) || !$value$plusargs("DIR=%s", dir)) begin
            $display("usage: vvp tb_mesh.vvp +M=<m> +N=<n> +K=<k> +DIR=<folder>");
            $finish;
        end
        if (!$value$plusargs("SHOW=%d", show)) show = 8;
        if (!$value$plusargs("LAT=%d", lat)) lat = 1;
        // +VCD=<file>: dump every signal (for `tcrtl grade --vcd`).
        if ($value$plusargs("VCD=%s", vcd_file)) begin
            $dumpfile(vcd_file);
            $dumpvars(0, tb_mesh);
        end
        if ($test$plusargs("STEPS")) begin
            if (m * n * k > MAXS)
                $display("NOTE: %0d step records exceed %0d, no steps.hex", m * n * k, MAXS);
            else
                steps_on = 1'b1;
        end
        if (m < 1 || n < 1 || k < 1 || m * k > MAXW || k * n > MAXW || m * n > MAXW) begin
            $display("ERROR: shape %0d x %0d x %0d out of range", m, n, k);
            $finish;
        end
        $readmemh({dir, "/a.hex"}, amem, 0, m * k - 1);
        $readmemh({dir, "/b.hex"}, bmem, 0, k * n - 1);
        $readmemh({dir, "/c.hex"}, cmem, 0, m * n - 1);
        $readmemh({dir, "/d.hex"}, dmem, 0, m * n - 1);

        passed = 0;
        failed = 0;
        @(negedge clk);
        @(negedge clk);
        rst = 1'b0;
        for (ti = 0; ti < m; ti = ti + 4) begin
            for (tj = 0; tj < n; tj = tj + 4) begin
                // Preload C into the accumulators.
                for (i = 0; i < 4; i = i + 1)
                    for (j = 0; j < 4; j = j + 1)
                        c_flat[32 * (4 * i + j) +: 32] =
                            (ti + i < m && tj + j < n) ? cmem[(ti + i) * n + tj + j] : 32'd0;
                load = 1'b1;
                @(negedge clk);
                load = 1'b0;
                cur_ti = ti;
                cur_tj = tj;
                t0 = cyc + 1;
                // K steps: column t of the A tile, row t of the B tile.
                for (t = 0; t < k; t = t + 1) begin
                    for (i = 0; i < 4; i = i + 1)
                        a_col[16 * i +: 16] = (ti + i < m) ? amem[(ti + i) * k + t] : 16'd0;
                    for (j = 0; j < 4; j = j + 1)
                        b_row[16 * j +: 16] = (tj + j < n) ? bmem[t * n + tj + j] : 16'd0;
                    vld = 1'b1;
                    @(negedge clk);
                end
                vld = 1'b0;
                a_col = 64'd0;
                b_row = 64'd0;
                // Drain: skew and wavefront (3 + 3) plus the PE's two stages, with margin.
                repeat (10) @(negedge clk);
                for (i = 0; i < 4; i = i + 1)
                    for (j = 0; j < 4; j = j + 1) begin
                        r = ti + i;
                        c = tj + j;
                        if (r < m && c < n) begin
                            got = acc_flat[32 * (4 * i + j) +: 32];
                            want = dmem[r * n + c];
                            dout[r * n + c] = got;
                            if (got === want) begin
                                passed = passed + 1;
                            end else begin
                                if (failed < show)
                                    $display("MISMATCH d[%0d][%0d]: got %08h want %08h",
                                             r, c, got, want);
                                failed = failed + 1;
                            end
                        end
                    end
            end
        end
        if ($value$plusargs("OUT=%s", out)) begin
            $writememh({out, "/d.hex"}, dout, 0, m * n - 1);
            if (steps_on)
                $writememh({out, "/steps.hex"}, smem, 0, m * n * k - 1);
        end
        $display("RESULT %0d passed, %0d failed", passed, failed);
        $finish;
    end
endmodule

`default_nettype wire
