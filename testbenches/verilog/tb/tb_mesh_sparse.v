// tb_mesh_sparse: runs a 2:4 sparse GEMM D = A x B + C tile by tile on mesh4x4_sparse (lab 5)
// and compares every element of D with the model's golden image, bit for bit.
//
// Inputs (plusargs): +DIR=<folder> as written by `tcrtl gemm --sparse ... --memh DIR`: the
// compressed A as a_values.hex (the kept values, M x K/2 FP16, row-major: two per group of
// four, in ascending K) and a_meta.hex (one metadata nibble per group, M x K/4: bits [1:0] the
// index of the group's first kept value, bits [3:2] the second's), b.hex (K x N FP16), c.hex
// and d.hex (M x N FP32), all row-major; a.hex (A decompressed) is not read. The shape M, N, K
// comes from the second header line of d.hex, as in tb_mesh.v; +M, +N, +K are optional and,
// when given, must equal it, and the first header lines of a_values.hex and a_meta.hex must
// say M x K/2 and M x K/4 (dense images, with no a_values.hex, are refused). Images of another
// format, mode, width or accumulator are refused too. +SHOW, +OUT, +STEPS, +LAT and +VCD are
// those of tb_mesh.v; a sparse element has K/2 steps (one per kept value), and +STEPS writes
// them in the order of the golden steps.hex.
//
// Feeding (docs/course/interfaces.md): a tile of D takes K/2 steps; step t carries, for row
// i, kept value t of A's row and its 2-bit index (bits [1:0] of the nibble of group t/2 for
// even t, bits [3:2] for odd t), and for column j the four B values B[4 (t/2) + l][j], l = 0..3
// of that group. Reset and sampling as tb_mesh.v: rst high for the first two clock edges,
// inputs change on the falling edge, the accumulators are sampled on the falling edge of each
// cycle with the PE's acc_vld high. Output: MISMATCH lines, then
//   RESULT <passed> passed, <failed> failed
// Rows and columns past M or N are fed zeros (index 0) and not compared.
`timescale 1ns/1ps
`default_nettype none

module tb_mesh_sparse;
    localparam integer MAXW = 1 << 16;   // words per image
    localparam integer MAXS = 1 << 18;   // step records
    localparam integer DRAIN = 10;       // edges after the last step before D is read (+LAT)
    localparam integer DRAIN_MAX = 64;   // edges waited for every acc_vld (acc_vld sampling)

    reg [15:0] vmem [0:MAXW-1];   // kept values of A
    reg [3:0]  nmem [0:MAXW-1];   // metadata nibbles of A
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
    reg  [7:0]   meta_col = 8'd0;
    reg  [255:0] b_grp = 256'd0;
    reg  [511:0] c_flat = 512'd0;
    wire [511:0] acc_flat;
    wire [15:0]  acc_vld_flat;

    mesh4x4_sparse dut (
        .clk(clk), .rst(rst), .vld(vld), .a_col(a_col), .meta_col(meta_col), .b_grp(b_grp),
        .load(load), .c_flat(c_flat), .acc_flat(acc_flat), .acc_vld_flat(acc_vld_flat)
    );

    // The golden images, the plusargs, the comparison and the result folder (shared with
    // the other GEMM testbenches).
`include "tb/golden_io.vh"

    // The clock, the step sampling, the C preload and the drain and check (shared with the
    // other mesh testbench).
`include "tb/mesh_steps.vh"

    // The compressed A's shape, from its headers.
    integer vr, vc, nr, nc;

    integer kh;                   // K/2: kept values per row, steps per tile
    integer ti, tj, i, j, l, t;
    reg [1023:0] vcd_file;
    reg [3:0]  nib;
    reg ok;

    initial begin
        read_problem("tb_mesh_sparse", "tcrtl gemm --sparse --memh", ok);
        if (!ok) $finish;
        kh = k / 2;
        tile_steps = kh;
        // The compressed A: its headers must name the shape of d.hex's problem.
        vr = 0; vc = 0; nr = 0; nc = 0;
        fd = $fopen({dir, "/a_values.hex"}, "r");
        if (fd == 0) begin
            $display("ERROR: cannot open %0s/a_values.hex: these are not sparse images (write them with tcrtl gemm --sparse --memh)", dir);
            $finish;
        end
        code = $fscanf(fd, "// tcrtl golden image a_values.hex: A kept values (%d x %d,", vr, vc);
        $fclose(fd);
        fd = $fopen({dir, "/a_meta.hex"}, "r");
        if (fd == 0) begin
            $display("ERROR: cannot open %0s/a_meta.hex: these are not sparse images (write them with tcrtl gemm --sparse --memh)", dir);
            $finish;
        end
        code = $fscanf(fd, "// tcrtl golden image a_meta.hex: A metadata nibbles (%d x %d,", nr, nc);
        $fclose(fd);
        if (k % 4 != 0 || vr != m || vc != k / 2 || nr != m || nc != k / 4) begin
            $display("ERROR: a_values.hex is %0d x %0d and a_meta.hex %0d x %0d (headers); the problem %0d x %0d x %0d (d.hex header) needs %0d x %0d and %0d x %0d",
                     vr, vc, nr, nc, m, n, k, m, k / 2, m, k / 4);
            $finish;
        end
        latency_option(ok);
        if (!ok) $finish;
        if ($value$plusargs("VCD=%s", vcd_file)) begin
            $dumpfile(vcd_file);
            $dumpvars(0, tb_mesh_sparse);
        end
        steps_option(m * n * kh);
        $readmemh({dir, "/a_values.hex"}, vmem, 0, m * kh - 1);
        $readmemh({dir, "/a_meta.hex"}, nmem, 0, m * (k / 4) - 1);
        $readmemh({dir, "/b.hex"}, bmem, 0, k * n - 1);

        @(negedge clk);
        @(negedge clk);
        rst = 1'b0;
        for (ti = 0; ti < m; ti = ti + 4) begin
            for (tj = 0; tj < n; tj = tj + 4) begin
                start_tile(ti, tj);
                // K/2 steps: kept value t of each row with its index, and group t/2's B rows.
                for (t = 0; t < kh; t = t + 1) begin
                    for (i = 0; i < 4; i = i + 1) begin
                        nib = (ti + i < m) ? nmem[(ti + i) * (k / 4) + t / 2] : 4'd0;
                        a_col[16 * i +: 16] = (ti + i < m) ? vmem[(ti + i) * kh + t] : 16'd0;
                        meta_col[2 * i +: 2] = (t % 2 == 0) ? nib[1:0] : nib[3:2];
                    end
                    for (j = 0; j < 4; j = j + 1)
                        for (l = 0; l < 4; l = l + 1)
                            b_grp[64 * j + 16 * l +: 16] =
                                (tj + j < n) ? bmem[(4 * (t / 2) + l) * n + tj + j] : 16'd0;
                    vld = 1'b1;
                    @(negedge clk);
                end
                vld = 1'b0;
                a_col = 64'd0;
                meta_col = 8'd0;
                b_grp = 256'd0;
                finish_tile(ti, tj);
            end
        end
        finish_run(m * n * kh, by_lat, by_lat ? lat : first_lat);
    end
endmodule

`default_nettype wire
