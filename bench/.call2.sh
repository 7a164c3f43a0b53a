set -u
C=49fb4d5
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1 NUMBA_CUZK_COMMIT=$C NUMBA_CUZK_CACHE_DIR=/tmp/kc COLUMNS=200 PYTHONPYCACHEPREFIX=/tmp/pycache
unset PYTHONDONTWRITEBYTECODE
W="-W ignore::numba.core.errors.NumbaPerformanceWarning"
(python3 -m bench.cpu_soak --rounds 80 --keep $OUT/soak > $OUT/soak.log 2>&1 &)
s=$SECONDS; python3 -m numba_cuzk.cli compile > $OUT/compile.log 2>&1; echo "compile rc $? $((SECONDS - s)) s"; grep -E "_g2|tasks in" $OUT/compile.log
timeout 150 python3 -m bench.msm --g1 "" --g2 16,20 --sweep threads=64,256 --out $OUT/msm.json > $OUT/msm.log 2>&1; echo "msm rc $?"; grep -v Warn $OUT/msm.log | tail -12
timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider -n 8 $W tests/field/test_device.py tests/curve/test_points.py tests/msm -k "pair or G2 or g2" > $OUT/tests.log 2>&1; echo "tests rc $?"; tail -5 $OUT/tests.log; grep -E "^(FAILED|ERROR)" $OUT/tests.log | head
bash bench/gpu_check.sh $C engine > $OUT/engine-all.log 2>&1; grep -E "round|overhead" $OUT/engine-all.log
cat $OUT/soak.log | grep -v INSECURE | tail -5
