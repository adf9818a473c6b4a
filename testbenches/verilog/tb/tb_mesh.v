// tb_mesh: runs a GEMM D = A x B + C tile by tile on mesh4x4 and compares every element of D
// with the model's golden image, bit for bit.
//
// Inputs (plusargs): +DIR=<folder with a.hex b.hex c.hex d.hex> as written by
// `tcrtl gemm --memh DIR` (FP16 A and B, FP32 C and D, row-major; the `//` header lines are
// skipped by $readmemh). The shape M, N, K comes from the second header line of d.hex
// ("// shape M N K = 5 7 9; formats fp16 x fp16; mode ieee; ..."); +M, +N, +K are optional
// and, when given, must equal it (a mismatch is refused with an ERROR line). Images of another
// format, mode, width or accumulator are refused too.
// Optional +SHOW=<n>: how many mismatches to print (default 8). Optional +OUT=<folder>: also
// write the design's D there as d.hex ($writememh), for `tcrtl grade --golden DIR --student
// OUT`, and OUT/sampling.txt (how the steps were sampled). With +OUT, +STEPS also writes
// OUT/steps.hex: every PE's accumulator after each step of its element (one line per row,
// column, step of D, the order of the golden steps.hex).
//
// Reset and sampling convention (docs/course/interfaces.md): rst is high for the first two
// clock edges; inputs change on the falling edge and are taken by the rising edge. A step's
// accumulator is sampled on the falling edge of each cycle in which the PE's acc_vld is high
// (the n-th acc_vld of a tile is step n). +LAT=<n> samples by latency instead: n clock edges
// from the edge at which the PE takes the step's operands to the edge after which acc shows
// the sum, counting both (2 for the reference PE, 1 for a single-cycle MAC); the same number
// `tcrtl grade --vcd` reports as the accumulator's lag.
// Output: one MISMATCH line per shown mismatch, then the summary line
//   RESULT <passed> passed, <failed> failed
// Tiles are 4 x 4 blocks of D; rows and columns past M or N are fed zeros and not compared.
`timescale 1ns/1ps
`default_nettype none

module tb_mesh;
    localparam integer MAXW = 1 << 16;   // words per image
    localparam integer MAXS = 1 << 18;   // step records
    localparam integer DRAIN = 10;       // edges after the last step before D is read (+LAT)
    localparam integer DRAIN_MAX = 64;   // edges waited for every acc_vld (acc_vld sampling)

    reg [15:0] amem [0:MAXW-1];
    reg [15:0] bmem [0:MAXW-1];
    reg [31:0] cmem [0:MAXW-1];
    reg [31:0] dmem [0:MAXW-1];
    reg [31:0] dout [0:MAXW-1];   // the design's D, for +OUT
    reg [31:0] smem [0:MAXS-1];   // the accumulator after each step, for +STEPS

    reg          clk = 1'b0;
    reg          rst = 1'b1;
    reg          vld = 1'b0;
    reg          load = 1'b0;
    reg  [63:0]  a_col = 64'd0;
    reg  [63:0]  b_row = 64'd0;
    reg  [511:0] c_flat = 512'd0;
    wire [511:0] acc_flat;
    wire [15:0]  acc_vld_flat;

    mesh4x4 dut (
        .clk(clk), .rst(rst), .vld(vld), .a_col(a_col), .b_row(b_row),
        .load(load), .c_flat(c_flat), .acc_flat(acc_flat), .acc_vld_flat(acc_vld_flat)
    );

    // The golden images, the plusargs, the comparison and the result folder (shared with
    // the other GEMM testbenches).
`include "tb/golden_io.vh"

    // Lint waiver (BLKSEQ): the clock generator and the sampling process below are testbench
    // code, not hardware: they assign with '=' on purpose, so that loop variables and the
    // step memory are updated in order within one process (no register is inferred).
    /* verilator lint_off BLKSEQ */
    always #5 clk = ~clk;

    integer lat;
    integer cyc = 0;              // clock edges so far
    integer t0 = -1000;           // the edge that takes step 0 of the current tile into PE (0, 0)
    integer cur_ti = 0, cur_tj = 0;
    integer si, sj, ss;
    // Lint waiver (UNUSEDSIGNAL): a step record's index; +STEPS is refused when M N K exceeds
    // MAXS = 2^18, so only its low 18 bits address the step memory.
    /* verilator lint_off UNUSEDSIGNAL */
    integer sidx;
    /* verilator lint_on UNUSEDSIGNAL */
    integer seen [0:15];          // acc_vld cycles of each PE in the current tile
    integer first_lat = -1;       // latency of PE (0, 0)'s first step, as acc_vld showed it
    reg by_lat = 1'b0;            // +LAT given: sample by latency, not by acc_vld

    always @(posedge clk) cyc <= cyc + 1;

    // Step sampling, on the falling edge (between the clock edges, every register settled).
    always @(negedge clk) begin
        for (si = 0; si < 4; si = si + 1)
            for (sj = 0; sj < 4; sj = sj + 1) begin
                if (by_lat) begin
                    // PE (i, j) takes step s at edge t0 + s + i + j; acc shows it lat - 1
                    // edges later.
                    ss = cyc - t0 - si - sj - (lat - 1);
                end else if (acc_vld_flat[4 * si + sj]) begin
                    ss = seen[4 * si + sj];
                    seen[4 * si + sj] = ss + 1;
                    if (si == 0 && sj == 0 && ss == 0 && first_lat < 0)
                        first_lat = cyc - t0 + 1;
                end else begin
                    ss = -1;
                end
                if (steps_on && ss >= 0 && ss < k && cur_ti + si < m && cur_tj + sj < n) begin
                    sidx = ((cur_ti + si) * n + cur_tj + sj) * k + ss;
                    smem[sidx[17:0]] = acc_flat[32 * (4 * si + sj) +: 32];
                end
            end
    end
    /* verilator lint_on BLKSEQ */

    // True when every in-range PE of the current tile has shown k steps.
    function all_seen;
        input integer steps;
        integer x, y;
        begin
            all_seen = 1'b1;
            for (x = 0; x < 4; x = x + 1)
                for (y = 0; y < 4; y = y + 1)
                    if (cur_ti + x < m && cur_tj + y < n && seen[4 * x + y] < steps)
                        all_seen = 1'b0;
        end
    endfunction

    integer ti, tj, i, j, t, r, c, waited;
    reg [1023:0] vcd_file;
    reg ok;

    initial begin
        read_problem("tb_mesh", "tcrtl gemm --memh", ok);
        if (!ok) $finish;
        if ($value$plusargs("LAT=%d", lat)) begin
            by_lat = 1'b1;
            if (lat < 1) begin
                $display("ERROR: +LAT=%0d: the latency counts the edge that takes the operands, so it is at least 1", lat);
                $finish;
            end
        end else begin
            lat = 0;
        end
        // +VCD=<file>: dump every signal (for `tcrtl grade --vcd`).
        if ($value$plusargs("VCD=%s", vcd_file)) begin
            $dumpfile(vcd_file);
            $dumpvars(0, tb_mesh);
        end
        steps_option(m * n * k);
        $readmemh({dir, "/a.hex"}, amem, 0, m * k - 1);
        $readmemh({dir, "/b.hex"}, bmem, 0, k * n - 1);

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
                for (i = 0; i < 16; i = i + 1)
                    seen[i] = 0;
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
                // Drain: skew and wavefront (3 + 3) plus the PE's stages. By latency: a fixed
                // wait; by acc_vld: until every PE has shown its k steps (at most DRAIN_MAX).
                if (by_lat) begin
                    repeat (DRAIN + (lat > 2 ? lat - 2 : 0)) @(negedge clk);
                end else begin
                    waited = 0;
                    while (!all_seen(k) && waited < DRAIN_MAX) begin
                        @(negedge clk);
                        waited = waited + 1;
                    end
                    if (!all_seen(k))
                        $display("TIMEOUT: tile (%0d, %0d): not every PE raised acc_vld %0d times within %0d cycles of the last step",
                                 ti, tj, k, DRAIN_MAX);
                    @(negedge clk);
                end
                for (i = 0; i < 4; i = i + 1)
                    for (j = 0; j < 4; j = j + 1) begin
                        r = ti + i;
                        c = tj + j;
                        if (r < m && c < n)
                            check_element(r, c, acc_flat[32 * (4 * i + j) +: 32]);
                    end
            end
        end
        finish_run(m * n * k, by_lat, by_lat ? lat : first_lat);
    end
endmodule

`default_nettype wire
