#version 450
layout(vertices = 3) out;
in vec2 tc_uv[];
in float tc_dist[];
out vec2 te_uv[];
patch out float te_lod;
void main() {
    te_uv[gl_InvocationID] = tc_uv[gl_InvocationID];
    gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;
    if (gl_InvocationID == 0) {
        float d = min(tc_dist[0], min(tc_dist[1], tc_dist[2]));
        float lvl = clamp(64.0 / max(d, 1.0), 1.0, 16.0);
        gl_TessLevelOuter[0] = lvl;
        gl_TessLevelOuter[1] = lvl;
        gl_TessLevelOuter[2] = lvl;
        gl_TessLevelInner[0] = lvl;
        te_lod = lvl;
    }
}
