// golden_io.vh: what the course's GEMM testbenches (tb_pe.v, tb_mesh.v, tb_mesh_sparse.v)
// share: the golden images' header and the plusargs, the comparison of one element of D, and
// the result folder. Included inside each testbench module, after its localparams MAXW and
// MAXS and its image memories cmem, dmem, dout and smem, as `include "tb/golden_io.vh"`: the
// path is relative to testbenches/verilog, the folder every compile command of the course
// runs in (Icarus Verilog and Verilator both look there).

    integer m, n, k, show;        // the problem's shape (d.hex's header); mismatches printed
    integer passed = 0, failed = 0;
    reg steps_on = 1'b0;          // +STEPS given (and the records fit smem)
    reg [1023:0] dir, out;
    integer fd, code, hm, hn, hk, hw, pm, pn, pk;
    reg [8*200-1:0] line;
    reg [8*16-1:0]  hfa, hfb, hmode, hpreset, hacc;

    // Reads +DIR and d.hex's header (its second line: "// shape M N K = 5 7 9; formats fp16 x
    // fp16; mode ieee; preset none; width 1; accumulator fp32; ..."), refuses images of another
    // datapath and +M +N +K other than the header's, reads +SHOW (default 8) and C and D. `tb`
    // names the testbench, `tool` the command that writes its images (for the messages). ok is
    // 0, after an ERROR line, when the run must stop.
    task read_problem;
        input [8*16-1:0] tb;
        input [8*32-1:0] tool;
        output ok;
        begin
            ok = 1'b0;
            if (!$value$plusargs("DIR=%s", dir)) begin
                $display("usage: vvp %0s.vvp +DIR=<folder of %0s> [+M=<m> +N=<n> +K=<k>] [+OUT=<folder> [+STEPS]] [+SHOW=<n>]",
                         tb, tool);
            end else begin
                fd = $fopen({dir, "/d.hex"}, "r");
                if (fd == 0) begin
                    $display("ERROR: cannot open %0s/d.hex (write it with %0s)", dir, tool);
                end else begin
                    // The first header line names the image, the second the problem ($fscanf
                    // on the file: Verilator's $sscanf does not scan a string that $fgets read).
                    code = $fgets(line, fd);
                    code = $fscanf(fd,
                        "// shape M N K = %d %d %d; formats %s x %s mode %s preset %s width %d; accumulator %s",
                        hm, hn, hk, hfa, hfb, hmode, hpreset, hw, hacc);
                    $fclose(fd);
                    m = hm;
                    n = hn;
                    k = hk;
                    if (code != 9)
                        $display("ERROR: %0s/d.hex has no shape header (write it with %0s); its first line: %0s",
                                 dir, tool, line);
                    else if (hfa != "fp16" || hfb != "fp16;" || hmode != "ieee;" || hpreset != "none;" || hw != 1 || hacc != "fp32;")
                        $display("ERROR: the golden images are %0s x %0s mode %0s preset %0s width %0d accumulator %0s; this testbench runs fp16 x fp16, ieee, no preset, width 1, fp32",
                                 hfa, hfb, hmode, hpreset, hw, hacc);
                    else if (($value$plusargs("M=%d", pm) && pm != hm) || ($value$plusargs("N=%d", pn) && pn != hn)
                             || ($value$plusargs("K=%d", pk) && pk != hk))
                        $display("ERROR: +M +N +K ask for another shape than the golden images' %0d x %0d x %0d (d.hex header); leave them out or match them",
                                 hm, hn, hk);
                    else if (m < 1 || n < 1 || k < 1 || m * k > MAXW || k * n > MAXW || m * n > MAXW)
                        $display("ERROR: shape %0d x %0d x %0d out of range", m, n, k);
                    else
                        ok = 1'b1;
                end
            end
            if (ok) begin
                if (!$value$plusargs("SHOW=%d", show)) show = 8;
                $readmemh({dir, "/c.hex"}, cmem, 0, m * n - 1);
                $readmemh({dir, "/d.hex"}, dmem, 0, m * n - 1);
            end
        end
    endtask

    // +STEPS: record the accumulator after each step, `records` of them in all (refused with
    // a NOTE when they exceed MAXS).
    task steps_option;
        input integer records;
        begin
            if ($test$plusargs("STEPS")) begin
                if (records > MAXS)
                    $display("NOTE: %0d step records exceed %0d, no steps.hex", records, MAXS);
                else
                    steps_on = 1'b1;
            end
        end
    endtask

    // Element (r, c) of the design's D: kept for +OUT, compared with the golden word.
    task check_element;
        input integer r, c;
        input [31:0] got;
        begin
            dout[r * n + c] = got;
            if (got === dmem[r * n + c]) begin
                passed = passed + 1;
            end else begin
                if (failed < show)
                    $display("MISMATCH d[%0d][%0d]: got %08h want %08h", r, c, got, dmem[r * n + c]);
                failed = failed + 1;
            end
        end
    endtask

    // With +OUT: the design's D as d.hex, with +STEPS its `records` step records as steps.hex,
    // and sampling.txt ("sampling lat N" when sampled by latency, else "sampling acc_vld N");
    // then the summary line, and the end of the run.
    task finish_run;
        input integer records;
        input by_latency;
        input integer sampled;
        begin
            if ($value$plusargs("OUT=%s", out)) begin
                $writememh({out, "/d.hex"}, dout, 0, m * n - 1);
                if (steps_on)
                    $writememh({out, "/steps.hex"}, smem, 0, records - 1);
                fd = $fopen({out, "/sampling.txt"}, "w");
                if (fd != 0) begin
                    if (by_latency)
                        $fdisplay(fd, "sampling lat %0d", sampled);
                    else
                        $fdisplay(fd, "sampling acc_vld %0d", sampled);
                    $fclose(fd);
                end
            end
            $display("RESULT %0d passed, %0d failed", passed, failed);
            $finish;
        end
    endtask
