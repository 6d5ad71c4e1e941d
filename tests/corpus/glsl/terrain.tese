#version 450
layout(triangles, equal_spacing, ccw) in;
in vec2 te_uv[];
patch in float te_lod;
layout(binding = 0) uniform Cam { mat4 view_proj; vec3 eye; } cam;
layout(binding = 1) uniform sampler2D heightmap;
out vec2 f_uv;
out float f_lod;
out float f_height;
void main() {
    vec3 bc = gl_TessCoord;
    vec2 uv = te_uv[0] * bc.x + te_uv[1] * bc.y + te_uv[2] * bc.z;
    vec4 p = gl_in[0].gl_Position * bc.x + gl_in[1].gl_Position * bc.y + gl_in[2].gl_Position * bc.z;
    float h = textureLod(heightmap, uv, 0.0).r;
    p.y += h * 20.0;
    f_uv = uv;
    f_lod = te_lod;
    f_height = h;
    gl_Position = cam.view_proj * p;
}
